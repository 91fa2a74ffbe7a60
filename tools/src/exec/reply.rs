//! The reply of both session tools, in codex's shape: a chunk id, the
//! wall time, the exit code or the session id, the token count, the
//! output (its beginning and end when too long), and the host's facts
//! beside it.

use std::time::Duration;

use baton_engine::shell_details::ShellDetails;
use baton_engine::ToolOutput;

use super::buffer::Taken;

/// The host's facts beside the reply: the exit code once the session
/// ended, and the output this call took. A session has one stream (a
/// terminal, or both pipes merged), so there is no `stderr`.
pub(crate) fn with_details(output: ToolOutput, taken: &Taken, exit: Option<i32>) -> ToolOutput {
    output.with_shell(ShellDetails {
        exit_code: exit,
        stdout: Some(taken.stream_tail()),
        ..Default::default()
    })
}

/// The reply, in codex's shape.
pub(crate) fn render(
    wall: Duration,
    taken: &Taken,
    exit: Option<i32>,
    session_id: i32,
    max_bytes: usize,
    notes: &[String],
) -> String {
    let text = taken.text();
    let original_tokens = (text.len() as u64 + taken.omitted).div_ceil(4);
    let mut out = format!("Chunk ID: {}\n", chunk_id());
    out.push_str(&format!("Wall time: {:.4} seconds\n", wall.as_secs_f64()));
    match exit {
        Some(code) => out.push_str(&format!("Process exited with code {code}\n")),
        None => out.push_str(&format!("Process running with session ID {session_id}\n")),
    }
    out.push_str(&format!("Original token count: {original_tokens}\n"));
    for note in notes {
        out.push_str(note);
        out.push('\n');
    }
    out.push_str("Output:\n");
    out.push_str(&clip(&text, max_bytes));
    out
}

/// Keeps the beginning and the end of `text` within `max` bytes.
fn clip(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let half = max / 2;
    let mut head_end = half;
    while !text.is_char_boundary(head_end) {
        head_end -= 1;
    }
    let mut tail_start = text.len() - half;
    while !text.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    let cut = (tail_start - head_end).div_ceil(4);
    format!(
        "{}…{cut} tokens truncated…{}",
        &text[..head_end],
        &text[tail_start..]
    )
}

/// A short id for one reply, as codex gives (it names nothing here).
fn chunk_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos() as u64);
    format!("{:06x}", (nanos ^ n.wrapping_mul(0x9e37_79b9)) & 0xff_ffff)
}
