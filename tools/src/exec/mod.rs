//! Interactive sessions: `exec_command` and `write_stdin`, with codex's
//! names and schemas.
//!
//! `exec_command` starts a command (on a PTY with `tty: true`), waits up to
//! `yield_time_ms`, and answers with the output so far and either the exit
//! code or a session id; `write_stdin` types into the session and answers
//! the same way. The pieces:
//! - [`buffer`]: the output since the last look, bounded head + tail;
//! - [`process`]: starting the program on a PTY or a pipe, as a process
//!   tree that dies with the session;
//! - [`session`]: one running session and its driver;
//! - [`store`]: the sessions of an engine, at most 64, pruned oldest idle
//!   first;
//! - [`judge`]: how commands and input are judged, like `Bash`;
//! - [`input`]: what one write may type into a shell, judged as an
//!   interactive bash reads it;
//! - [`state`]: lines that leave code behind for later lines (aliases,
//!   prompts, traps), which the rules alone do not allow;
//! - [`terminal`]: who reads the terminal now, asked of the kernel before
//!   text is typed into a shell;
//! - [`tools`]: the two tools;
//! - [`reply`]: codex's reply text.

pub(crate) mod buffer;
mod input;
mod judge;
mod process;
mod reply;
mod session;
mod state;
pub(crate) mod store;
mod terminal;
mod tools;

use std::time::Duration;

use baton_engine::schema::InvalidSchema;
use baton_engine::Tool;

pub use store::{stop_all, stop_all_now, ExecSessions, MAX_SESSIONS, WARN_SESSIONS};
pub use tools::{exec_command, write_stdin, ExecCommandInput, WriteStdinInput};

/// The shortest wait of one call.
pub const MIN_YIELD: Duration = Duration::from_millis(250);
/// The longest wait of one call.
pub const MAX_YIELD: Duration = Duration::from_secs(30);

/// Limits of the session tools.
#[derive(Clone, Debug)]
pub struct ExecConfig {
    /// `exec_command`'s wait when the call gives none.
    pub exec_default_yield: Duration,
    /// `write_stdin`'s wait when the call gives none.
    pub write_default_yield: Duration,
    /// Output tokens per reply when the call gives none.
    pub default_max_output_tokens: u64,
    /// Output kept per session between two looks (head + tail).
    pub buffer_bytes: usize,
    /// `write_stdin` with input answers once output came and then paused
    /// this long (within its `yield_time_ms`).
    pub settle: Duration,
}

impl Default for ExecConfig {
    fn default() -> Self {
        ExecConfig {
            exec_default_yield: Duration::from_secs(10),
            write_default_yield: MIN_YIELD,
            default_max_output_tokens: 10_000,
            buffer_bytes: buffer::BUFFER_BYTES,
            settle: Duration::from_millis(50),
        }
    }
}

impl ExecConfig {
    fn yield_for(&self, requested: Option<u64>, default: Duration) -> Duration {
        requested
            .map_or(default, Duration::from_millis)
            .clamp(MIN_YIELD, MAX_YIELD)
    }

    /// Bytes of output per reply (a token is about 4 bytes).
    fn max_output_bytes(&self, tokens: Option<u64>) -> usize {
        let tokens = tokens
            .unwrap_or(self.default_max_output_tokens)
            .clamp(1, 1_000_000);
        (tokens * 4) as usize
    }
}

/// `exec_command` and `write_stdin`, configured by `config`.
pub fn tools(config: &ExecConfig) -> Result<Vec<Tool>, InvalidSchema> {
    Ok(vec![exec_command(config)?, write_stdin(config)?])
}

#[cfg(test)]
mod line_end_differential;
#[cfg(test)]
mod pty_differential;
#[cfg(test)]
mod tests;
