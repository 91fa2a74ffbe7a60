//! The `baton` binary as a command, and feeding it a message on stdin.
//! Only the root package's tests know the binary's path
//! (`CARGO_BIN_EXE_baton`); they pass it here.

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// `bin` (the `baton` binary) as a command; the test adds its arguments
/// and environment.
pub fn baton(bin: &str) -> Command {
    Command::new(bin)
}

/// Runs `cmd` with `input` on its stdin (a message given as `-`); its
/// whole output once it ends.
pub fn with_stdin(cmd: &mut Command, input: &str) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("baton starts");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("message written");
    child.wait_with_output().expect("baton ends")
}

/// Runs `cmd` to its end and reads its stdout as one JSON document; a
/// failed run fails the test with the command's stderr.
pub fn json_stdout<T: serde::de::DeserializeOwned>(cmd: &mut Command) -> T {
    let out = cmd.output().expect("baton starts");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON document")
}
