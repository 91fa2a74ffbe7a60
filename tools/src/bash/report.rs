//! The text the model reads after a command.
//!
//! Output first (it is what the model asked for), then one line per fact it
//! needs to act on: the exit code when it failed, why the command was
//! stopped, where the complete output is, where the shell's directory went.

use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::time::Duration;

use baton_engine::shell;

use super::output::{human_bytes, Capture};
use super::run::Ending;

/// The conventional shell status of a process: its code, or 128 + signal.
pub(crate) fn status_code(status: &ExitStatus) -> i32 {
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(-1)
}

/// Whether this ending is a failure, with exit-code semantics (SPEC §8).
pub(crate) fn is_error(command: &str, ending: &Ending) -> bool {
    match ending {
        Ending::Exited(status) => match status.code() {
            Some(code) => shell::exit_is_error(command, code),
            None => true,
        },
        Ending::TimedOut { .. } | Ending::Cancelled(_) | Ending::Lost(_) => true,
        // Still running, as a background task: nothing failed yet.
        Ending::Detached(_) => false,
    }
}

/// One sentence on how the command ended; `None` for a plain success.
pub(crate) fn ending_line(command: &str, ending: &Ending, elapsed: Duration) -> Option<String> {
    let secs = elapsed.as_secs_f64();
    match ending {
        Ending::Exited(status) => match (status.code(), status.signal()) {
            (Some(0), _) => None,
            (Some(code), _) if !shell::exit_is_error(command, code) => Some(format!(
                "Exit code {code} (for this command that is an answer, such as \"no match\" or \"files differ\", not a failure)"
            )),
            (Some(code), _) => Some(format!("Exit code {code}")),
            (None, Some(signal)) => Some(format!(
                "The command was killed by signal {signal} ({}).",
                signal_name(signal)
            )),
            (None, None) => Some("The command ended without an exit code.".to_string()),
        },
        Ending::TimedOut { limit, stop } => Some(format!(
            "The command timed out after {} and was stopped{}. \
             The output above is what it printed until then. For long-running commands use \
             run_in_background, or pass a larger `timeout` (at most 600000 ms).",
            limit_text(*limit),
            stopped_with(stop)
        )),
        Ending::Cancelled(stop) => Some(format!(
            "The command was stopped after {secs:.1} s, before it finished{}; the output above is what it printed until then.",
            stopped_with(stop)
        )),
        Ending::Lost(err) => Some(format!(
            "Baton lost track of the shell ({err}) and stopped it after {secs:.1} s."
        )),
        // The caller says where the command went (see `detach`).
        Ending::Detached(_) => None,
    }
}

/// The time limit as the call gave it: `1500 ms`, `2 s`.
fn limit_text(limit: Duration) -> String {
    let ms = limit.as_millis();
    if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{ms} ms")
    }
}

/// What became of the processes the command started, truthfully.
fn stopped_with(stop: &baton_engine::process::StopReport) -> String {
    match stop.survivors {
        0 => ", together with every process it started".to_string(),
        n => format!(
            ", but {n} process{} it started could not be stopped and may still be running",
            if n == 1 { "" } else { "es" }
        ),
    }
}

/// Where the complete output is, when the inline text is not all of it (or
/// when asked to name the file anyway).
pub(crate) fn log_line(capture: &Capture, omitted: bool, always: bool) -> Option<String> {
    let rendered_all = !omitted;
    let mut line = match capture.log_path() {
        Some(path) if always || !rendered_all => format!(
            "The complete output ({}, {}) is in {}; read parts of it with Read (offset/limit) or search it with Grep.",
            human_bytes(capture.total_bytes()),
            lines(capture.total_lines()),
            path.display()
        ),
        Some(_) => return None,
        None if rendered_all => return None,
        None => String::from("The middle of the output is not available."),
    };
    if let Some(problem) = capture.log_problem() {
        line.push_str(&format!(" Note: {problem}."));
    }
    Some(line)
}

/// Output text plus the trailing lines, separated by a blank line.
pub(crate) fn compose(output: &str, lines: &[String]) -> String {
    let mut text = output.trim_end_matches('\n').to_string();
    if !lines.is_empty() {
        if text.is_empty() {
            text.push_str("(no output)");
        }
        text.push_str("\n\n");
        text.push_str(&lines.join("\n"));
    }
    text
}

fn lines(n: u64) -> String {
    if n == 1 {
        "1 line".to_string()
    } else {
        format!("{n} lines")
    }
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        1 => "SIGHUP",
        2 => "SIGINT",
        6 => "SIGABRT",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        15 => "SIGTERM",
        _ => "see `kill -l`",
    }
}
