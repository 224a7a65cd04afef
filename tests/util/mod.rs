//! Helpers shared by the command-line tests: run the built binary, hex bytes.
#![allow(dead_code)]

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Runs `xla-shape ARGS` with `stdin` on its standard input and waits for it. A
/// program that exits before reading all its input is not an error here.
pub fn xla_shape(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_xla-shape"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run xla-shape");
    let mut input = child.stdin.take().expect("stdin");
    match input.write_all(stdin) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(e) => panic!("write stdin: {e}"),
    }
    drop(input);
    child.wait_with_output().expect("wait for xla-shape")
}

/// Bytes from hex, spaces allowed: `"10 0b"`.
pub fn bytes(hex_text: &str) -> Vec<u8> {
    hex::decode(hex_text.replace(' ', "")).expect("test hex")
}

/// Standard output, lossily as text.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Standard error, lossily as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}
