//! The `a2a-recover` binary: everything lives in the library.

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(a2a_recover::main(std::env::args_os()))
}
