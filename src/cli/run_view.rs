//! `baton run` for a person at a terminal: one line per call that shows it
//! queued, running (with its elapsed time and latest progress) and done
//! (with its outcome), then each result as text.
//!
//! Only when stdout is a terminal and neither `--json` nor `--events` was
//! given: scripts that read stdout get the JSON they always got. Everything
//! shown comes from the model or from commands it chose, so every piece of
//! text goes through [`printable`] first: an escape sequence in a command's
//! output must not repaint the terminal or hide what ran.

use std::collections::HashMap;
use std::io::Write;
use std::time::Duration;

use baton::actors::{CallEvent, CallState};
use baton::engine::permission::summary::printable;
use baton::engine::{CallResult, Outcome, ToolUse};
use baton::Event;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Characters of a call's label (tool and main argument).
const LABEL_CHARS: usize = 60;
/// Characters of the progress message shown on a running call's line.
const PROGRESS_CHARS: usize = 60;
/// Lines of each result printed at the end; the rest is counted.
const RESULT_LINES: usize = 40;

pub(super) struct RunView {
    multi: MultiProgress,
    bars: HashMap<usize, ProgressBar>,
    labels: Vec<String>,
}

impl RunView {
    /// A view of `calls`, drawn on stdout.
    pub(super) fn new(calls: &[ToolUse]) -> RunView {
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stdout());
        RunView {
            multi,
            bars: HashMap::new(),
            labels: calls.iter().map(label).collect(),
        }
    }

    /// Updates the lines for one event of the batch.
    pub(super) fn event(&mut self, event: &Event) {
        match event {
            Event::Call(CallEvent {
                index: Some(index),
                state,
                ..
            }) => self.call_state(*index, state),
            Event::Progress {
                index, progress, ..
            } => {
                let bar = self.bar(*index);
                bar.set_message(cut(&printable(&progress.message), PROGRESS_CHARS));
            }
            _ => {}
        }
    }

    fn call_state(&mut self, index: usize, state: &CallState) {
        let bar = self.bar(index);
        match state {
            CallState::Queued { .. } => bar.set_message("queued"),
            CallState::Started => {
                bar.set_style(running_style());
                bar.set_message("running");
                bar.reset_elapsed();
                // Ticks keep the spinner and the elapsed time moving while
                // the call prints nothing.
                bar.enable_steady_tick(Duration::from_millis(120));
            }
            CallState::WaitingApproval => bar.set_message("waiting for approval"),
            CallState::Finished { outcome, duration } => {
                bar.set_style(done_style());
                bar.finish_with_message(format!(
                    "{} {}",
                    outcome_text(outcome),
                    seconds(*duration)
                ));
            }
            _ => {}
        }
    }

    /// The line of call `index`, made on first use.
    fn bar(&mut self, index: usize) -> ProgressBar {
        if let Some(bar) = self.bars.get(&index) {
            return bar.clone();
        }
        let bar = self.multi.add(ProgressBar::new_spinner());
        bar.set_style(queued_style());
        let label = self
            .labels
            .get(index)
            .cloned()
            .unwrap_or_else(|| format!("call {index}"));
        bar.set_prefix(format!("[{}] {label}", index + 1));
        self.bars.insert(index, bar.clone());
        bar
    }

    /// Stops drawing while `ask` uses the terminal (an approval prompt).
    pub(super) fn hide(&self) {
        self.multi.set_draw_target(ProgressDrawTarget::hidden());
    }

    pub(super) fn show(&self) {
        self.multi.set_draw_target(ProgressDrawTarget::stdout());
    }

    /// Ends the live lines and prints each result, in call order.
    pub(super) fn finish(
        self,
        results: &[CallResult],
        out: &mut impl Write,
    ) -> std::io::Result<()> {
        for bar in self.bars.values() {
            if !bar.is_finished() {
                bar.finish();
            }
        }
        drop(self.multi);
        writeln!(out)?;
        for (index, result) in results.iter().enumerate() {
            let label = self
                .labels
                .get(index)
                .cloned()
                .unwrap_or_else(|| printable(&result.tool_name));
            writeln!(
                out,
                "── [{}] {label}: {}",
                index + 1,
                outcome_text(&result.outcome)
            )?;
            let text = result.text();
            let lines: Vec<&str> = text.lines().collect();
            for line in lines.iter().take(RESULT_LINES) {
                writeln!(out, "   {}", printable(line))?;
            }
            if lines.len() > RESULT_LINES {
                writeln!(
                    out,
                    "   … {} more lines (use --json for everything)",
                    lines.len() - RESULT_LINES
                )?;
            }
        }
        out.flush()
    }
}

/// `Tool(main argument)`, one line, escaped, cut to fit.
fn label(call: &ToolUse) -> String {
    let main = [
        "command",
        "cmd",
        "file_path",
        "path",
        "pattern",
        "url",
        "query",
        "description",
    ]
    .iter()
    .find_map(|key| call.input.get(*key).and_then(|v| v.as_str()));
    let text = match main {
        Some(arg) => format!("{}({})", call.name, arg),
        None => call.name.clone(),
    };
    cut(&printable(&text), LABEL_CHARS)
}

fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

fn outcome_text(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Success => "✓ success".into(),
        Outcome::Cancelled { started: true } => "✗ cancelled while running".into(),
        Outcome::Cancelled { started: false } => "✗ cancelled before it started".into(),
        other => format!("✗ {}", baton::engine::metrics::outcome_label(other)),
    }
}

fn seconds(d: Duration) -> String {
    format!("{:.1}s", d.as_secs_f64())
}

fn queued_style() -> ProgressStyle {
    ProgressStyle::with_template("  · {prefix} {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
}

fn running_style() -> ProgressStyle {
    ProgressStyle::with_template("{spinner} {prefix} {msg} ({elapsed})")
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
}

fn done_style() -> ProgressStyle {
    ProgressStyle::with_template("  {prefix} {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
}
