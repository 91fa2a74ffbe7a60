//! `Bash`, `TaskOutput` and `TaskStop`: running shell commands.
//!
//! The shell is the most powerful and the most dangerous tool a model has,
//! and the one whose failure modes users complain about most: hung calls,
//! orphaned processes, a flood of output eating the context, a `cd` that
//! does not stick. The pieces, each in its own module:
//! - [`process`]: one fresh `bash` per call in its own process group, and
//!   stopping the whole group (TERM, grace, KILL; also on drop);
//! - [`run`]: driving a shell to its end — exit, timeout or cancellation;
//! - [`output`] and [`log_file`]: bounded head + tail in memory, the whole
//!   output on disk;
//! - [`progress`]: what the host sees while a command runs;
//! - [`cwd`]: carrying `cd` over to later calls, within the roots;
//! - [`report`]: the text the model reads, with exit-code semantics;
//! - [`detach`]: a foreground command going on in the background, at its
//!   time limit or on the host's word;
//! - [`background`] and [`task_tools`]: `run_in_background`, `TaskOutput`,
//!   `TaskStop`, [`stop_all`] for shutdown and [`stop_owned`] for the end of
//!   a subagent.
//!
//! Whether a command is read-only (and so may run beside other calls) is
//! decided by `baton_engine::shell`, which parses it with a real bash
//! grammar.

pub(crate) mod background;
pub(crate) mod confine;
mod cwd;
mod detach;
mod log_file;
pub(crate) mod output;
pub(crate) mod process;
mod progress;
mod report;
mod run;
mod task_tools;
mod tool;

use std::time::Duration;

use baton_engine::schema::InvalidSchema;
use baton_engine::Tool;

pub use background::{stop_all, stop_all_now, stop_owned, BackgroundTasks, TaskOwner};
pub use detach::{send_to_background, TIMEOUT_KILLS_ENV};
pub use task_tools::{TaskOutputInput, TaskStopInput};
pub use tool::BashInput;

/// Most characters of output a result may carry inline, whatever the config.
pub const MAX_INLINE_CHARS: usize = 150_000;

/// Limits and defaults of the shell tools.
#[derive(Clone, Debug)]
pub struct BashConfig {
    /// Time limit when the call gives none.
    pub default_timeout: Duration,
    /// Longer requested time limits are cut to this.
    pub max_timeout: Duration,
    /// Characters of output kept inline (head + tail); at most
    /// [`MAX_INLINE_CHARS`].
    pub inline_chars: usize,
    /// Largest output file kept per command, in bytes.
    pub log_max_bytes: u64,
    /// Time between SIGTERM and SIGKILL when a command is stopped.
    pub stop_grace: Duration,
    /// How long output is still read after the shell exited.
    pub drain: Duration,
    /// No progress before this much time.
    pub progress_delay: Duration,
    /// Time between two progress reports after the first.
    pub progress_every: Duration,
    /// Longest `TaskOutput` wait when the call gives none.
    pub task_output_default_wait: Duration,
    /// What happens to processes a finished foreground command left running
    /// (`server &`): `true` keeps them until the session (or owner) ends,
    /// so a later call can use them; `false` stops them with the call.
    pub keep_background_jobs: bool,
    /// What a foreground command that reaches its time limit becomes:
    /// `true` (the default, as in Claude Code) moves it to the background,
    /// still running, and the result names the task; `false` stops it, as
    /// eval harnesses may want. [`TIMEOUT_KILLS_ENV`]` = 1` sets `false`.
    pub timeout_moves_to_background: bool,
    /// Read stderr from its own pipe, so the host's `details.stderr` has it
    /// apart. Off by default: with one pipe for both streams the model
    /// reads the output exactly in the order it was written; with two,
    /// writes to both streams in the same instant may swap places in the
    /// model's text. [`SEPARATE_STDERR_ENV`]` = 1` turns it on.
    pub separate_stderr: bool,
    /// Time limit of a background task when the call gives none (30 min).
    pub background_timeout: Duration,
    /// Longer requested background limits are cut to this (2 h).
    pub max_background_timeout: Duration,
}

impl Default for BashConfig {
    fn default() -> Self {
        BashConfig {
            default_timeout: Duration::from_millis(120_000),
            max_timeout: Duration::from_millis(600_000),
            inline_chars: 30_000,
            log_max_bytes: 1 << 30,
            stop_grace: Duration::from_millis(1_500),
            drain: Duration::from_millis(300),
            progress_delay: Duration::from_secs(2),
            progress_every: Duration::from_secs(1),
            task_output_default_wait: Duration::from_secs(30),
            keep_background_jobs: true,
            timeout_moves_to_background: !detach::timeout_kills_from_env(),
            separate_stderr: separate_stderr_from_env(),
            background_timeout: Duration::from_secs(30 * 60),
            max_background_timeout: Duration::from_secs(2 * 60 * 60),
        }
    }
}

/// Set to `1` (or `true`) to read a command's stderr apart from its
/// stdout (see [`BashConfig::separate_stderr`]).
pub const SEPARATE_STDERR_ENV: &str = "BATON_BASH_SEPARATE_STDERR";

fn separate_stderr_from_env() -> bool {
    std::env::var(SEPARATE_STDERR_ENV)
        .is_ok_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "1" | "true" | "yes"))
}

impl BashConfig {
    pub(crate) fn inline_chars(&self) -> usize {
        self.inline_chars.clamp(2, MAX_INLINE_CHARS)
    }
}

/// `Bash`, `TaskOutput` and `TaskStop`, configured by `config`.
pub fn tools(config: &BashConfig) -> Result<Vec<Tool>, InvalidSchema> {
    Ok(vec![
        tool::tool(config)?,
        task_tools::task_output(config)?,
        task_tools::task_stop(config)?,
    ])
}

/// How a shell command is named in other results: `Bash(<first 40
/// characters>…)`, on one line.
pub fn label(command: &str) -> String {
    let flat: String = command
        .trim()
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let mut short: String = flat.chars().take(40).collect();
    if flat.chars().count() > 40 {
        short.push('…');
    }
    format!("Bash({short})")
}

#[cfg(test)]
mod tests;
