//! `baton serve --journal`: the session's calls go through the call
//! journal (`baton_journal`), kept in `<state dir>/journal` and keyed by the
//! session's id.
//!
//! A host that lost Baton (a crash, SIGKILL) restarts it with `--resume ID
//! --journal` and sends the calls it has no results for again, with the
//! same ids. Each one is then answered for what happened to it, never run a
//! second time:
//!
//! - a new id runs as in any session; its start is on disk before the call
//!   is handed to the engine, its progress goes to the journal as output,
//!   and its result is on disk before the host sees its `result` line;
//! - an id that finished is answered with the journaled result;
//! - an id that was lost (its process died while it ran) or whose result
//!   was pruned is answered with an error result saying so;
//! - an id that runs now in this process is answered with an error result
//!   saying it still runs (its own result comes where it was added);
//! - the same id with another tool or input is refused (`invalid_input`).
//!
//! Answers take their place in call order through
//! `BatchHandle::add_answered`; their result lines carry a `journal` field.
//! Calls of subagents (lines with `agent_id`) are not journaled: their
//! `Agent` call is.

mod stored;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use baton::engine::pipeline::messages::wrap;
use baton::{CallResult, Engine, Event, Outcome, ToolUse};
use baton_journal::{Begin, CallKey, Ended, Journal, JournalError, Limits, Runner};
use futures::{Stream, StreamExt};
use serde_json::{json, Value};

use crate::cli::CliError;

/// The journal of a session that asked for one.
#[derive(Clone)]
pub(super) struct SessionJournal {
    journal: Journal,
    session: String,
}

/// What to do with one call of a message.
pub(super) enum Decision {
    /// Hand it to the engine. In a journaled session its runner comes
    /// with it, its start already on disk.
    Run(ToolUse, Option<Runner>),
    /// Answer it without running it: `result` in its turn, `tag` as the
    /// result line's `journal` field.
    Answer(CallResult, Option<Value>),
}

impl SessionJournal {
    /// The journal in the session's state directory, answering for the
    /// calls of the session's earlier lives.
    pub(super) fn open(engine: &Engine) -> Result<SessionJournal, CliError> {
        let session = engine.runtime().session();
        let dir = session.state_dir().join("journal");
        let journal = Journal::open(&dir, Limits::default())
            .map_err(|e| CliError::Failed(format!("--journal: {e}")))?;
        Ok(SessionJournal {
            journal,
            session: session.id().to_string(),
        })
    }

    /// Decides each call, in order; the starts of the calls to run are
    /// then made durable together (one sync for a whole message).
    pub(super) async fn decide(&self, calls: impl IntoIterator<Item = ToolUse>) -> Vec<Decision> {
        let mut decisions = Vec::new();
        for call in calls {
            decisions.push(self.begin(call).await);
        }
        // (Borrowing the runners alone: a decision holds a result, which is
        // not `Sync`.)
        let runners: Vec<Option<&Runner>> = decisions
            .iter()
            .map(|d| match d {
                Decision::Run(_, runner) => runner.as_ref(),
                Decision::Answer(..) => None,
            })
            .collect();
        let starts = runners.iter().map(|runner| async move {
            match runner {
                Some(runner) => runner.started().await,
                None => Ok(()),
            }
        });
        let started = futures::future::join_all(starts).await;
        let mut out = Vec::with_capacity(decisions.len());
        for (decision, started) in decisions.into_iter().zip(started) {
            out.push(match (decision, started) {
                (Decision::Run(call, Some(runner)), Err(e)) => {
                    // Not handed over: recorded as lost, answered as not run.
                    let why = format!("its start could not be journaled: {e}");
                    let _ = runner.lose(why).await;
                    not_run(&call, &e)
                }
                (decision, _) => decision,
            });
        }
        out
    }

    async fn begin(&self, call: ToolUse) -> Decision {
        let key = CallKey::new(self.session.clone(), call.id.clone());
        match self.journal.begin(&key, &call.name, &call.input, 0).await {
            Ok(Begin::Run(runner)) => Decision::Run(call, Some(runner)),
            Ok(Begin::Ended(ended)) => answer_ended(&call, ended),
            Ok(Begin::Join(_)) => {
                let started = self.journal.status(&key).is_some_and(|s| s.started);
                let text = format!(
                    "A call with the id {} is still running in this session (added by an earlier \
                     line), so this one was not run. Its result comes in the message that holds \
                     it; a new call needs a new id.",
                    call.id
                );
                answer(
                    &call,
                    wrap(&text),
                    Outcome::InvalidInput,
                    Some(json!({"state": "running", "started": started})),
                )
            }
            Err(e @ JournalError::Conflict { .. }) => {
                answer(&call, wrap(&e.to_string()), Outcome::InvalidInput, None)
            }
            Err(e) => not_run(&call, &e),
        }
    }
}

/// The answer for a call the journal says ended.
fn answer_ended(call: &ToolUse, ended: Ended) -> Decision {
    let id = &call.id;
    match ended {
        Ended::Finished(kept) => {
            let tag = Some(json!({"state": "finished", "started": true}));
            match stored::restore(id, &kept) {
                Ok(result) => Decision::Answer(result, tag),
                Err(e) => answer(
                    call,
                    wrap(&format!(
                        "The journaled result of {id} could not be read: {e}"
                    )),
                    Outcome::Internal,
                    tag,
                ),
            }
        }
        Ended::Lost(lost) => answer(
            call,
            wrap(&baton::journal_text::lost(id, &lost)),
            Outcome::Internal,
            Some(json!({"state": "lost", "started": lost.started})),
        ),
        Ended::Pruned => answer(
            call,
            wrap(&baton::journal_text::pruned(id)),
            Outcome::Internal,
            Some(json!({"state": "pruned", "started": true})),
        ),
    }
}

/// The journal could not take the call: it is not run.
fn not_run(call: &ToolUse, e: &JournalError) -> Decision {
    let text = format!("Baton did not run {}: {e}", call.name);
    answer(call, wrap(&text), Outcome::Internal, None)
}

fn answer(call: &ToolUse, text: String, outcome: Outcome, tag: Option<Value>) -> Decision {
    Decision::Answer(CallResult::error(call, text, outcome), tag)
}

/// The journaled calls of one message: the runners of the calls it runs
/// and the tags of the ones answered, by call index.
#[derive(Default)]
pub(super) struct BatchJournal {
    runners: Runners,
    tags: HashMap<usize, Value>,
}

type Runners = Arc<Mutex<HashMap<usize, Runner>>>;

fn lock(runners: &Runners) -> std::sync::MutexGuard<'_, HashMap<usize, Runner>> {
    runners.lock().unwrap_or_else(PoisonError::into_inner)
}

impl BatchJournal {
    /// Call `index` runs with `runner` (noted before the engine has it, so
    /// its first event finds it).
    pub(super) fn running(&self, index: usize, runner: Runner) {
        lock(&self.runners).insert(index, runner);
    }

    /// Call `index` could not be handed to the engine after all.
    pub(super) async fn not_handed_over(&self, index: usize, why: String) {
        let runner = lock(&self.runners).remove(&index);
        if let Some(runner) = runner {
            let _ = runner.lose(why).await;
        }
    }

    /// Call `index` is answered; its result line gets `tag`.
    pub(super) fn answered(&mut self, index: usize, tag: Option<Value>) {
        if let Some(tag) = tag {
            self.tags.insert(index, tag);
        }
    }

    /// The `journal` field of call `index`'s result line, if it has one.
    pub(super) fn take_tag(&mut self, index: usize) -> Option<Value> {
        if self.tags.is_empty() {
            return None;
        }
        self.tags.remove(&index)
    }

    /// The message's events, with each running call's progress and result
    /// written to the journal on the way: a result only leaves once it is
    /// on disk, so a host never sees one the journal could not give again.
    /// Events leave in their order, but the writes of results that follow
    /// each other are awaited side by side (up to [`SYNCS_AT_ONCE`]), so
    /// they share the journal's syncs instead of taking one each in turn.
    pub(super) fn follow<S>(&self, events: S) -> impl Stream<Item = Event> + Send + 'static
    where
        S: Stream<Item = Event> + Send + 'static,
    {
        let runners = self.runners.clone();
        events
            .map(move |event| {
                // Taken from the event now, in order (it holds a result,
                // which is not `Sync`, so it is not borrowed while waiting).
                let finish = record(&runners, &event);
                async move {
                    if let Some(finish) = finish {
                        finish.await;
                    }
                    event
                }
            })
            .buffered(SYNCS_AT_ONCE)
    }
}

/// Results of one message whose journal writes are awaited together.
const SYNCS_AT_ONCE: usize = 256;

/// Writes a running call's progress to the journal; for its result, the
/// write to wait for before the result leaves.
fn record(
    runners: &Runners,
    event: &Event,
) -> Option<impl std::future::Future<Output = ()> + Send + 'static> {
    match event {
        Event::Progress {
            index, progress, ..
        } => {
            if let Some(runner) = lock(runners).get(index) {
                runner.output(baton::journal_text::progress_text(progress));
            }
            None
        }
        Event::Result { index, result } => {
            let runner = lock(runners).remove(index)?;
            let kept = stored::store(result);
            let id = result.call_id.clone();
            Some(async move {
                let written = match kept {
                    Ok(kept) => runner.finish(kept).await,
                    Err(e) => {
                        runner
                            .lose(format!("its result could not be encoded: {e}"))
                            .await
                    }
                };
                // The host still gets the result; only a retry will not.
                if let Err(e) = written {
                    eprintln!("baton: {e}; the result of call {id} is not in the journal");
                }
            })
        }
        _ => None,
    }
}
