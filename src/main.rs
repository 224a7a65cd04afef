//! The `xla-shape` command line: argument parsing and error rendering only; every
//! piece of logic lives in the library.
#![forbid(unsafe_code)]

mod cli;

fn main() -> std::process::ExitCode {
    cli::run()
}
