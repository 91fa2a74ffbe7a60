//! Writing protocol lines to stdout, one JSON object per line, flushed.
//!
//! A line is flushed as soon as it is written, except while the session
//! holds output ([`hold`]) to emit a run of events that were all ready at
//! once: those lines leave together, with one write and one flush when the
//! hold is released. A 10,000-call message makes four lines per call; one
//! write per line was the largest cost of the serve path (docs/benchmarks.md).

use std::io::Write;
use std::sync::{Mutex, PoisonError};

use serde_json::{json, Value};

use crate::cli::CliError;

/// Lines held back while a [`Hold`] lasts.
static HELD: Mutex<Held> = Mutex::new(Held {
    on: false,
    lines: Vec::new(),
});

/// The held lines, and whether a hold lasts. The buffer is kept from one
/// hold to the next: grown afresh for each run of events, it took new
/// pages from the allocator (zeroed by the kernel) about once per call.
struct Held {
    on: bool,
    lines: Vec<u8>,
}

/// The most buffer kept between holds; a larger one (a run of large
/// results) is freed.
const KEEP_BYTES: usize = 1 << 20;

pub(super) fn write_line(value: &Value) -> Result<(), CliError> {
    write_made(|out| serde_json::to_writer(out, value).map_err(std::io::Error::from))
}

/// Writes the line `value` with `raw` (JSON text already written, such as
/// a result's block or a batch's answer) as its `key`: the bytes
/// [`write_line`] would write had `raw` been parsed into `value`.
pub(super) fn write_line_with_raw(value: &Value, key: &str, raw: &[u8]) -> Result<(), CliError> {
    write_made(|out| baton::jsonl::write_with_raw(out, value, key, raw))
}

/// Writes the line `make` writes (without its newline): held while a
/// [`Hold`] lasts, else written and flushed at once. Every line goes
/// through here, whether made from a `Value` or straight from its event
/// ([`baton::jsonl_direct`]).
pub(super) fn write_made(
    make: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>,
) -> Result<(), CliError> {
    let mut held = HELD.lock().unwrap_or_else(PoisonError::into_inner);
    if held.on {
        let buffer = &mut held.lines;
        let start = buffer.len();
        if make(&mut *buffer).is_err() {
            // Only a value that cannot be JSON fails; no half line is left.
            buffer.truncate(start);
            return Err(CliError::Failed("cannot write a line as JSON".into()));
        }
        buffer.push(b'\n');
        return Ok(());
    }
    drop(held);
    let mut line = Vec::with_capacity(256);
    make(&mut line).map_err(|e| CliError::Failed(format!("cannot write a line as JSON: {e}")))?;
    line.push(b'\n');
    write_all(&line)
}

/// Holds every line written until [`Hold::release`] (or the drop) writes
/// them at once. Only one hold is taken at a time (by the session loop,
/// around code that never waits).
pub(super) struct Hold(());

pub(super) fn hold() -> Hold {
    HELD.lock().unwrap_or_else(PoisonError::into_inner).on = true;
    Hold(())
}

impl Hold {
    /// Writes the held lines and flushes.
    pub(super) fn release(self) -> Result<(), CliError> {
        std::mem::forget(self);
        end_hold()
    }
}

impl Drop for Hold {
    /// Released by an early return (an error): the lines still go out.
    fn drop(&mut self) {
        let _ = end_hold();
    }
}

/// Ends the hold, writes the held lines, and keeps their buffer for the
/// next hold (written outside the lock: other tasks' lines wait for stdout
/// only, not for this write).
fn end_hold() -> Result<(), CliError> {
    let mut lines = {
        let mut held = HELD.lock().unwrap_or_else(PoisonError::into_inner);
        held.on = false;
        std::mem::take(&mut held.lines)
    };
    let written = write_all(&lines);
    if lines.capacity() <= KEEP_BYTES {
        lines.clear();
        let mut held = HELD.lock().unwrap_or_else(PoisonError::into_inner);
        if held.lines.capacity() == 0 {
            held.lines = lines;
        }
    }
    written
}

fn write_all(bytes: &[u8]) -> Result<(), CliError> {
    if bytes.is_empty() {
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|_| out.flush())
        .map_err(|e| CliError::Failed(format!("cannot write to stdout: {e}")))
}

/// An `error` line: something the host sent could not be used. `line` is
/// the input line's number when the error is about one line.
pub(super) fn error_line(message: &str, line: Option<u64>) -> Result<(), CliError> {
    let mut value = json!({"type": "error", "message": message});
    if let Some(n) = line {
        value["line"] = json!(n);
    }
    write_line(&value)
}
