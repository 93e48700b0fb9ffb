fn main() -> std::process::ExitCode {
    homelab_lint::cli::main()
}
