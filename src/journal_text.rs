//! What a journaled front end says about a call it did not run.
//!
//! `baton mcp serve` (named calls) and `baton serve --journal` both answer
//! calls from the call journal (`baton_journal`): a call that was lost, or
//! whose result was pruned, is answered with an error instead of a second
//! run. Hosts and models read the same words from either, and both feed a
//! running call's progress to the journal as the same text, so the output
//! a lost call reports looks alike too.

use baton_engine::Progress;
use baton_journal::Lost;
use serde_json::Value;

/// The journal's text for one progress report: the message, then the last
/// lines the tool showed, where it gives them (the shell tools do).
pub fn progress_text(progress: &Progress) -> String {
    let lines: Vec<&str> = progress
        .data
        .as_ref()
        .and_then(|d| d.get("last_lines"))
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if lines.is_empty() {
        return progress.message.clone();
    }
    format!("{}\n{}", progress.message, lines.join("\n"))
}

/// The answer for the call `id`, lost without a result: why, whether it had
/// started (its effects may have happened), and the last output it showed.
pub fn lost(id: &str, lost: &Lost) -> String {
    let mut text = format!("The call {id} was lost: {}.", lost.why);
    text.push_str(if lost.started {
        " It had started, so some of its effects may have happened; it was not run again."
    } else {
        " It had not started: nothing of it ran."
    });
    if !lost.output.is_empty() {
        text.push_str("\nOutput seen before it was lost:\n");
        text.push_str(&lost.output);
    }
    text
}

/// The answer for the call `id`, which finished but whose result the
/// journal dropped to stay within its bounds.
pub fn pruned(id: &str) -> String {
    format!(
        "The call {id} finished earlier, but its result was dropped to keep the journal within \
         its bounds; it was not run again."
    )
}
