//! `baton serve`: a JSON-lines session for hosts in other languages.
//!
//! The protocol is documented in docs/serve-protocol.md. One line in, zero
//! or more lines out; a bad line gets an `error` line and the session goes
//! on. Several messages can follow each other in one session; context
//! changes carry over. The pieces:
//! - [`input`]: numbered byte lines, so that no line (invalid UTF-8, too
//!   long) can end the session;
//! - [`session`]: the session's batches and pending questions, and what
//!   each kind of line does;
//! - [`output`]: the lines Baton writes;
//! - [`wire`]: calls in any wire format, raw stream events, answers in
//!   the format the calls came in;
//! - [`journal`]: `--journal`, calls answered for after a crash, never run
//!   twice.

mod approve;
mod ask;
mod background;
mod elicit;
mod hook_event;
mod input;
mod journal;
mod model_hooks;
pub(super) mod oauth;
mod output;
mod pending;
pub(super) mod resume;
mod session;
mod strict;
mod subagent;
mod subagent_mail;
mod tasks;
mod wire;

use baton::engine::HookEvent;
use baton::InterruptKind;
use futures::{FutureExt, StreamExt};

use baton::engine::wire::WireFormat;

use super::{CliError, Setup};
use input::{Line, Lines};
use session::Session;

/// After a signal during start-up, input is read until it pauses this long
/// (what the host had already sent), then the session ends.
const DRAIN_IDLE: std::time::Duration = std::time::Duration::from_millis(300);
/// Most events written under one hold: a host reads the first lines of a
/// long run without waiting for the whole of it.
const READY_AT_ONCE: usize = 512;

pub(super) async fn serve(
    mut setup: Setup,
    format: Option<WireFormat>,
    journaled: bool,
) -> Result<(), CliError> {
    let agents = subagent::Agents::default();
    setup.builder = setup.builder.take().map(|b| b.subagents(agents.runner()));
    let engine = setup.engine()?;
    // Opened before anything is said: a journal that cannot be kept is a
    // failed start, not a session that would run calls twice.
    let journal = match journaled {
        true => Some(journal::SessionJournal::open(&engine)?),
        false => None,
    };
    resume::announce(&engine)?;
    let mut save_warned = false;
    resume::save(&engine, &mut save_warned);
    let start_source = if engine.resumed().is_some() {
        "resume"
    } else {
        "startup"
    };
    let pipeline = engine.runtime().pipeline();
    let hooks = pipeline.hooks();
    let (has_start, has_end) = (
        hooks.has_any(HookEvent::SessionStart, start_source),
        hooks.has_any(HookEvent::SessionEnd, "other"),
    );
    let hook_registry = hooks.clone();
    // Signals are watched from here on: a SessionStart hook that hangs must
    // not make SIGTERM wait (nor kill Baton without a word).
    let stop = super::signals::stop_requested();
    tokio::pin!(stop);
    let mut stopping = false;
    if has_start {
        let start = engine.session_start(start_source);
        tokio::pin!(start);
        let outcome = tokio::select! {
            outcome = &mut start => outcome,
            _ = &mut stop => {
                stopping = true;
                hook_registry.stop_running(baton::engine::CancelReason::Shutdown);
                start.await
            }
        };
        output::write_line(&super::session::line(&outcome, "SessionStart"))?;
    }
    // Read here, not forwarded by a task: a notification the engine sent
    // before a batch event must leave before it (a task a call started
    // shows before the call's result), which two hops could reorder.
    let mut notes = engine.notifications();
    let mut wire = wire::Wire::new(setup.pool.clone(), format);
    wire.set = setup.tool_set;
    let mut session = Session::new(engine, wire, agents);
    session.journal = journal;
    // Prompt and agent hooks ask the host's model.
    setup
        .model_hooks
        .set(std::sync::Arc::new(session.model_hooks.clone()));
    let mut lines = Lines::new(tokio::io::BufReader::new(tokio::io::stdin()));
    // A signal during start-up (MCP connections, SessionStart hooks): what
    // the host already sent is answered, every call as never started, then
    // the session ends (early_signals.rs).
    let drain = stopping || super::early_signals::already();
    stopping |= drain;
    session.refuse_calls = drain;
    let mut input_open = true;
    let mut hooks_bounded = false;
    let hook_events = session.hook_events.clone();
    loop {
        if !input_open && !hooks_bounded {
            hooks_bounded = true;
            super::hook_grace::stop_hooks_after_grace(hook_registry.clone());
        }
        if !input_open && session.is_idle() {
            if has_end {
                let outcome = session.engine().session_end("other").await;
                output::write_line(&super::session::line(&outcome, "SessionEnd"))?;
            }
            return Ok(());
        }
        tokio::select! {
            line = lines.next(), if input_open => match line {
                Some(Line::Text { number, text }) => {
                    if !session.handle_line(number, &text).await? {
                        input_open = false;
                        session.end_stream().await?;
                        session.close_input();
                    }
                    resume::save(session.engine(), &mut save_warned);
                }
                Some(Line::Unusable { number, why }) => output::error_line(&why, Some(number))?,
                None => {
                    input_open = false;
                    session.end_stream().await?;
                    session.close_input();
                }
            },
            first = session.next_batch_event() => {
                if let Some(note) = ready_note(&mut notes) {
                    emit_ready(&mut session, note, |_| ready_note(&mut notes), &mut save_warned)?;
                }
                emit_ready(&mut session, first, Session::ready_batch_event, &mut save_warned)?;
            }
            // The session's notifications (tasks starting and ending).
            Some(note) = notes.next() => {
                emit_ready(&mut session, (None, note), |_| ready_note(&mut notes), &mut save_warned)?;
            }
            // A `hook_event` ended: the session may be idle now.
            _ = hook_events.ended() => {}
            _ = tokio::time::sleep(DRAIN_IDLE), if drain && input_open => {
                input_open = false;
                session.end_stream().await?;
                session.close_input();
            }
            _ = &mut stop, if !stopping => {
                // Stop every message's calls, report their results, exit.
                stopping = true;
                input_open = false;
                session.close_input();
                session.interrupt_all(InterruptKind::Cancel);
            }
        }
    }
}

/// A notification the engine has already sent, without waiting.
fn ready_note(notes: &mut baton::NotificationStream) -> Option<(Option<u64>, baton::Event)> {
    notes
        .next()
        .now_or_never()
        .flatten()
        .map(|note| (None, note))
}

/// Emits `first` and up to [`READY_AT_ONCE`] events `next` has ready, as
/// one write (see `output`); emitting never waits, so nothing is held back
/// for long.
fn emit_ready(
    session: &mut Session,
    first: (Option<u64>, baton::Event),
    mut next: impl FnMut(&mut Session) -> Option<(Option<u64>, baton::Event)>,
    save_warned: &mut bool,
) -> Result<(), CliError> {
    let held = output::hold();
    let (batch, event) = first;
    let mut changes = resume::changes_state(&event);
    session.emit(batch, event)?;
    for _ in 0..READY_AT_ONCE {
        let Some((batch, event)) = next(session) else {
            break;
        };
        changes |= resume::changes_state(&event);
        session.emit(batch, event)?;
    }
    // Saved before the host sees the lines: a host that reads a result
    // and then loses Baton (SIGKILL) resumes a session that knows what
    // the result said (a task started, a rule).
    if changes {
        resume::save(session.engine(), save_warned);
    }
    held.release()
}
