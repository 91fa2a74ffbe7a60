//! Writing protocol lines to stdout, one JSON object per line, flushed.

use std::io::Write;

use serde_json::{json, Value};

use crate::cli::CliError;

pub fn write_line(value: &Value) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{value}")
        .and_then(|_| out.flush())
        .map_err(|e| CliError::Failed(format!("cannot write to stdout: {e}")))
}

/// An `error` line: something the host sent could not be used. `line` is
/// the input line's number when the error is about one line.
pub fn error_line(message: &str, line: Option<u64>) -> Result<(), CliError> {
    let mut value = json!({"type": "error", "message": message});
    if let Some(n) = line {
        value["line"] = json!(n);
    }
    write_line(&value)
}
