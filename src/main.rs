// The linter allocates many small nodes (every YAML value, every copy a
// kustomize or Flux step makes); mimalloc halves the time glibc's
// allocator took on a 1,100-file repo (BENCHMARKS.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    homelab_lint::cli::main()
}
