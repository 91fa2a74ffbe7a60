//! `baton run`: one assistant message in, its user message of results out.

use std::io::{BufWriter, Read, Stdout, Write};

use baton::engine::wire::{self, AnswerWriter, Asked, WireError, WireFormat, WireTools};
use baton::engine::{CallResult, ToolPool, ToolUse};
use baton::jsonl::{summary_json, write_event, write_with_raw};
use baton::{BatchSummary, Event, InterruptKind};
use serde_json::json;

use super::{approve, CliError, Setup};

/// The message text from a file or stdin (`-`).
pub(super) fn read_input(file: &str) -> Result<String, CliError> {
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
/// the names and nulls the wire format forced undone, and the native items
/// among them (Responses), to answer each in its own output type. Calls
/// past `max_calls` are refused by the engine unread, so only their ids and
/// names are read (see [`wire::BoundedMessage`]): a message of 100,000
/// calls costs its text and 100,000 ids, not a tree of every input. Nothing
/// else of the message is kept.
pub(super) fn parse_message(
    text: &str,
    format: Option<WireFormat>,
    pool: &ToolPool,
    max_calls: usize,
) -> Result<(WireFormat, Vec<ToolUse>, Asked), WireError> {
    let message = wire::BoundedMessage::from_str(text, max_calls)?;
    let (format, calls) = message.parse(format)?;
    if format == WireFormat::OpenAiChat {
        // Several choices: only choice 0 runs; say so.
        if let Some(note) = wire::openai_chat::choices_note(message.head()) {
            eprintln!("baton: {note}");
        }
    }
    let asked = match format {
        WireFormat::OpenAiResponses => Asked::from_items(message.output_items()?),
        _ => Asked::default(),
    };
    drop(message);
    let tools = WireTools::new(pool, format);
    Ok((
        format,
        calls.into_iter().map(|c| tools.resolve(c)).collect(),
        asked,
    ))
}

/// What `run` prints on stdout.
#[derive(Clone, Copy, Debug)]
pub(super) struct Output {
    /// JSON lines of every event (`--events`).
    pub events: bool,
    /// The live view for a person (stdout is a terminal, no `--json`).
    pub live: bool,
}

pub(super) async fn run(
    mut setup: Setup,
    format: WireFormat,
    calls: Vec<ToolUse>,
    asked: &Asked,
    output: Output,
) -> Result<(), CliError> {
    let events = output.events;
    let mut view = output.live.then(|| super::run_view::RunView::new(&calls));
    if !events && !output.live {
        // Only results are printed: the calls' lifecycle events would be
        // made, sent and dropped, three per call.
        setup.builder = setup.builder.take().map(|b| b.call_events(false));
    }
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

    let mut answer = Answer::new(format, asked, output);
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
                write_done(&mut out, s, answer.take_done_line(s))?;
            } else if !matches!(event, Event::PermissionRequest(_)) {
                write_event_line(&mut out, &event)?;
            }
        }
        match event {
            Event::Result { result, .. } => {
                // A hook's systemMessage is for the user: the terminal.
                for message in &result.system_messages {
                    eprintln!("baton: hook: {message}");
                }
                answer.push(*result)
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
                    _ = approve::ask(*prompt) => {}
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
    match answer {
        Answer::View(results) => {
            if let Some(view) = view {
                view.finish(&results, &mut out).map_err(stdout_error)?;
            }
            if results.is_empty() {
                writeln!(out, "{NO_CALLS}").map_err(stdout_error)?;
            }
        }
        Answer::Stdout { writer, failed } => {
            if let Some(e) = failed {
                return Err(stdout_error(e));
            }
            if writer.written() == 0 {
                // Nothing to answer: `null` on stdout, and why on stderr.
                eprintln!("baton: {NO_CALLS}");
                write_line(&mut out, &serde_json::Value::Null)?;
            } else {
                let mut rest = writer
                    .finish(&summary.additional_context)
                    .map_err(stdout_error)?;
                rest.write_all(b"\n")
                    .and_then(|_| rest.flush())
                    .map_err(stdout_error)?;
            }
        }
        Answer::DoneLine(_) => {}
    }
    Ok(())
}

/// Where results go as they arrive, in call order.
enum Answer<'a> {
    /// Straight into the answer on stdout (the default): a result is
    /// dropped once written, so memory does not grow with the message.
    /// A write that failed (stdout closed) is reported at the end; the
    /// batch still runs to its end.
    Stdout {
        writer: AnswerWriter<'a, BufWriter<Stdout>>,
        failed: Option<std::io::Error>,
    },
    /// Into the answer the `done` line carries (`--events`; the results
    /// themselves are already on their own lines).
    DoneLine(Option<AnswerWriter<'a, Vec<u8>>>),
    /// Kept for the live view's text at the end.
    View(Vec<CallResult>),
}

impl<'a> Answer<'a> {
    fn new(format: WireFormat, asked: &'a Asked, output: Output) -> Answer<'a> {
        if output.events {
            Answer::DoneLine(Some(AnswerWriter::new(format, asked, Vec::new())))
        } else if output.live {
            Answer::View(Vec::new())
        } else {
            // Large writes: the answer of a big message leaves in 64 KiB
            // pieces rather than one flush per result.
            let out = BufWriter::with_capacity(1 << 16, std::io::stdout());
            Answer::Stdout {
                writer: AnswerWriter::new(format, asked, out),
                failed: None,
            }
        }
    }

    fn push(&mut self, result: CallResult) {
        match self {
            Answer::Stdout { writer, failed } => {
                if failed.is_none() {
                    if let Err(e) = writer.push(&result) {
                        *failed = Some(e);
                    }
                }
            }
            Answer::DoneLine(Some(writer)) => {
                // Writing into memory does not fail.
                let _ = writer.push(&result);
            }
            Answer::DoneLine(None) => {}
            Answer::View(results) => results.push(result),
        }
    }

    /// The `done` line's answer, closed with the batch's hook context;
    /// `None` when there were no results.
    fn take_done_line(&mut self, summary: &BatchSummary) -> Option<Vec<u8>> {
        let Answer::DoneLine(writer) = self else {
            return None;
        };
        let writer = writer.take()?;
        if writer.written() == 0 {
            return None;
        }
        writer.finish(&summary.additional_context).ok()
    }
}

/// The `--events` `done` line: the summary and the answer (the bytes
/// [`Answer::take_done_line`] wrote), or `null` and why.
fn write_done(
    out: &mut impl Write,
    summary: &BatchSummary,
    answer: Option<Vec<u8>>,
) -> Result<(), CliError> {
    let mut line = json!({"type": "done", "summary": summary_json(summary)});
    let Some(answer) = answer else {
        // As in serve: the model APIs reject an empty user message.
        line["message"] = serde_json::Value::Null;
        line["reason"] = json!(NO_CALLS);
        return write_line(out, &line);
    };
    write_with_raw(&mut *out, &line, "message", &answer)
        .and_then(|_| out.write_all(b"\n"))
        .and_then(|_| out.flush())
        .map_err(stdout_error)
}

/// An `--events` line of `event`, written whole and flushed.
fn write_event_line(out: &mut impl Write, event: &Event) -> Result<(), CliError> {
    let mut line = Vec::with_capacity(256);
    write_event(&mut line, event, None, &[])
        .map_err(|e| CliError::Failed(format!("cannot write a line as JSON: {e}")))?;
    line.push(b'\n');
    out.write_all(&line)
        .and_then(|_| out.flush())
        .map_err(stdout_error)
}

fn stdout_error(e: std::io::Error) -> CliError {
    CliError::Failed(format!("cannot write to stdout: {e}"))
}

/// What `run` says about a message without tool calls.
const NO_CALLS: &str = "the message has no tool calls, so there are no results to send; \
                        do not send an empty user message";

fn write_line(out: &mut impl Write, value: &serde_json::Value) -> Result<(), CliError> {
    writeln!(out, "{value}")
        .and_then(|_| out.flush())
        .map_err(stdout_error)
}
