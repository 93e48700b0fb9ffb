// The linter allocates many small nodes (every YAML value, every copy a
// kustomize or Flux step makes); mimalloc halves the time glibc's
// allocator took on a 1,100-file repo (BENCHMARKS.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    homelab_lint::alloc::no_transparent_huge_pages();
    // One rustls crypto provider for the whole process (kube's TLS uses
    // it); installing fails only if one is already installed.
    let _ = rustls::crypto::ring::default_provider().install_default();
    homelab_lint::cli::main()
}
