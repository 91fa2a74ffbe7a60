//! `baton run`: one assistant message in, its user message of results out.

use std::io::{Read, Write};

use baton::engine::wire::{self, WireError, WireFormat, WireTools};
use baton::engine::{ToolPool, ToolUse};
use baton::jsonl::{event_json, results_message_with_context, summary_json};
use baton::{Event, InterruptKind};
use serde_json::json;

use super::{approve, CliError, Setup};

/// The message text from a file or stdin (`-`).
pub fn read_input(file: &str) -> Result<String, CliError> {
    let mut text = String::new();
    let read = if file == "-" {
        std::io::stdin().read_to_string(&mut text)
    } else {
        std::fs::File::open(file).and_then(|mut f| f.read_to_string(&mut text))
    };
    read.map_err(|e| CliError::Usage(format!("cannot read {file}: {e}")))?;
    Ok(text)
}

/// The calls of the message `text`, in `format` or the detected one, with
/// the names and nulls the wire format forced undone.
pub fn parse_message(
    text: &str,
    format: Option<WireFormat>,
    pool: &ToolPool,
) -> Result<(WireFormat, Vec<ToolUse>), WireError> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| WireError::NotJson(e.to_string()))?;
    let (format, calls) = wire::parse(&value, format)?;
    if format == WireFormat::OpenAiChat {
        // Several choices: only choice 0 runs; say so.
        if let Some(note) = wire::openai_chat::choices_note(&value) {
            eprintln!("baton: {note}");
        }
    }
    let tools = WireTools::new(pool, format);
    Ok((
        format,
        calls.into_iter().map(|c| tools.resolve(c)).collect(),
    ))
}

/// What `run` prints on stdout.
#[derive(Clone, Copy, Debug)]
pub struct Output {
    /// JSON lines of every event (`--events`).
    pub events: bool,
    /// The live view for a person (stdout is a terminal, no `--json`).
    pub live: bool,
}

pub async fn run(
    mut setup: Setup,
    format: WireFormat,
    calls: Vec<ToolUse>,
    value: &serde_json::Value,
    output: Output,
) -> Result<(), CliError> {
    let events = output.events;
    let mut view = output.live.then(|| super::run_view::RunView::new(&calls));
    let engine = setup.engine()?;
    // A signal ends a SessionStart hook that hangs (its calls are then
    // answered as never started); before, Baton waited for it.
    let stop = super::signals::stop_requested();
    tokio::pin!(stop);
    let start = engine.session_start("startup");
    tokio::pin!(start);
    let mut interrupted = false;
    let outcome = tokio::select! {
        outcome = &mut start => outcome,
        _ = &mut stop => {
            interrupted = true;
            engine.runtime().pipeline().hooks().stop_running(baton::engine::CancelReason::Shutdown);
            start.await
        }
    };
    super::session::report(&outcome, "SessionStart");
    let mut batch = engine
        .open_batch()
        .await
        .map_err(|e| CliError::Failed(e.to_string()))?;
    if interrupted || super::early_signals::already() {
        // The signal came during start-up: the batch is stopped before its
        // calls are added, so each is answered as never started.
        interrupted = true;
        batch.interrupt(InterruptKind::Cancel);
    }
    let set = engine.tool_set();
    for call in calls {
        let call = baton::tool_set::translate(set, call);
        batch
            .add(call)
            .map_err(|e| CliError::Failed(e.to_string()))?;
    }
    batch.end();

    let mut results = Vec::new();
    let mut summary = None;
    // Not locked for the whole run: the live view draws from its own thread.
    let mut out = std::io::stdout();
    loop {
        let event = tokio::select! {
            e = batch.next_event() => e,
            _ = &mut stop, if !interrupted => {
                // Ctrl-C / SIGTERM stops the calls; results still follow.
                interrupted = true;
                batch.interrupt(InterruptKind::Cancel);
                continue;
            }
        };
        let Some(event) = event else { break };
        if let Some(view) = view.as_mut() {
            view.event(&event);
        }
        if events {
            if let Event::Done(s) = &event {
                let mut line = json!({"type": "done", "summary": summary_json(s)});
                line["message"] = results_message_with_context(format, value, results.iter(), s);
                if results.is_empty() {
                    // As in serve: the model APIs reject an empty user message.
                    line["message"] = serde_json::Value::Null;
                    line["reason"] = json!(NO_CALLS);
                }
                write_line(&mut out, &line)?;
            } else if !matches!(event, Event::PermissionRequest(_)) {
                write_line(&mut out, &event_json(&event, None))?;
            }
        }
        match event {
            Event::Result { result, .. } => {
                // A hook's systemMessage is for the user: the terminal.
                for message in &result.system_messages {
                    eprintln!("baton: hook: {message}");
                }
                results.push(result)
            }
            Event::Done(s) => {
                for message in &s.system_messages {
                    eprintln!("baton: hook: {message}");
                }
                summary = Some(s);
                break;
            }
            Event::PermissionRequest(prompt) if setup.approvals => {
                // Ctrl-C at the prompt interrupts at once, without waiting
                // for Enter; the pending question is then abandoned and the
                // call reported as interrupted, not as answered "no".
                let keep = prompt.clone();
                if let Some(view) = &view {
                    view.hide();
                }
                tokio::select! {
                    _ = approve::ask(prompt) => {}
                    _ = &mut stop, if !interrupted => {
                        interrupted = true;
                        batch.interrupt(InterruptKind::Cancel);
                        eprintln!();
                        // Let the interrupt reach the call before the
                        // question is dropped (dropping it denies).
                        tokio::spawn(async move {
                            tokio::time::sleep(std::time::Duration::from_secs(2)).await;
                            drop(keep);
                        });
                    }
                }
                if let Some(view) = &view {
                    view.show();
                }
            }
            _ => {}
        }
    }
    batch.quiescent().await;
    super::session::report(&engine.session_end("other").await, "SessionEnd");
    let Some(summary) = summary else {
        return Err(CliError::Failed(
            "the batch ended without reporting done".into(),
        ));
    };
    if let Some(view) = view {
        view.finish(&results, &mut out)
            .map_err(|e| CliError::Failed(format!("cannot write to stdout: {e}")))?;
        if results.is_empty() {
            writeln!(out, "{NO_CALLS}")
                .map_err(|e| CliError::Failed(format!("cannot write to stdout: {e}")))?;
        }
    } else if !events && results.is_empty() {
        // Nothing to answer: `null` on stdout, and why on stderr.
        eprintln!("baton: {NO_CALLS}");
        write_line(&mut out, &serde_json::Value::Null)?;
    } else if !events {
        let message = results_message_with_context(format, value, results.iter(), &summary);
        write_line(&mut out, &message)?;
    }
    Ok(())
}

/// What `run` says about a message without tool calls.
const NO_CALLS: &str = "the message has no tool calls, so there are no results to send; \
                        do not send an empty user message";

fn write_line(out: &mut impl Write, value: &serde_json::Value) -> Result<(), CliError> {
    writeln!(out, "{value}")
        .and_then(|_| out.flush())
        .map_err(|e| CliError::Failed(format!("cannot write to stdout: {e}")))
}
