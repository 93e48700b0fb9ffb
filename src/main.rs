// jemalloc on Linux, mimalloc elsewhere: src/alloc.rs says why.
#[global_allocator]
static GLOBAL: homelab_lint::alloc::Allocator = homelab_lint::alloc::ALLOCATOR;

fn main() -> std::process::ExitCode {
    homelab_lint::alloc::start();
    homelab_lint::cores::start();
    // One rustls crypto provider for the whole process (kube's TLS uses
    // it); installing fails only if one is already installed.
    let _ = rustls::crypto::ring::default_provider().install_default();
    homelab_lint::cli::main()
}
