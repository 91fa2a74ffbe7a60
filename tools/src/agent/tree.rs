//! The session's agents: every subagent started in it, with its name,
//! type, parent and state, for `ListAgents` and `SendMessage`.
//!
//! A record outlives its run: a finished subagent can be continued by
//! name or id, so the record keeps what a new run needs (its definition,
//! model and the transcript its runner reported). The state and the inbox
//! change under one lock, so a message is either queued for a running
//! subagent (which reads it) or resumes a finished one, never lost
//! between the two.

use std::sync::Arc;
use std::time::Instant;

use baton_engine::subagent::AgentDefinition;
use baton_engine::subagent_inbox::{Inbox, Letter};
use baton_engine::Session;
use parking_lot::Mutex;
use serde_json::Value;

/// Where a subagent is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AgentState {
    /// Its run goes on (in the foreground or the background).
    Running,
    /// Its run ended with a final answer.
    Finished,
    /// Its run ended with an error.
    Failed,
    /// Its run was cancelled before it finished.
    Cancelled,
}

impl AgentState {
    /// The state's name in task lists and `SendMessage` replies.
    pub fn as_str(self) -> &'static str {
        match self {
            AgentState::Running => "running",
            AgentState::Finished => "finished",
            AgentState::Failed => "failed",
            AgentState::Cancelled => "cancelled",
        }
    }
}

/// One subagent of the session.
#[derive(Clone, Debug)]
pub struct AgentRecord {
    /// The agent id, as `SendMessage` and `TaskOutput` name it.
    pub id: String,
    /// The `name` given at launch, if any.
    pub name: Option<String>,
    /// The definition it runs as (`subagent_type`).
    pub agent_type: String,
    /// The short task description given at launch.
    pub description: String,
    /// The subagent that started it; `None`: the main agent.
    pub parent: Option<String>,
    /// Where it is in its life.
    pub state: AgentState,
    /// Whether it was launched with `run_in_background`.
    pub background: bool,
    /// Messages sent to it, read between its turns.
    pub inbox: Arc<Inbox>,
    /// When it was first launched.
    pub started: Instant,
    pub(crate) definition: Arc<AgentDefinition>,
    pub(crate) model: Option<String>,
    pub(crate) transcript: Option<Vec<Value>>,
}

/// The session slot holding every subagent record, in start order.
#[derive(Default, Debug)]
pub struct AgentTree {
    records: Mutex<Vec<AgentRecord>>,
}

/// What becomes of a message to a target.
pub(crate) enum Delivery {
    /// Queued for the running subagent.
    Queued(AgentRecord),
    /// The subagent had ended: it is marked running again, and the caller
    /// must start the new run with this record.
    Resume(AgentRecord),
}

impl AgentTree {
    /// The session's tree (created empty on first use).
    pub fn of(session: &Session) -> Arc<AgentTree> {
        session.slots().get_or_default::<AgentTree>()
    }

    /// Every record, in start order.
    pub fn all(&self) -> Vec<AgentRecord> {
        self.records.lock().clone()
    }

    /// Adds a new subagent, or marks a resumed one running again.
    pub(crate) fn started(&self, record: AgentRecord) {
        let mut records = self.records.lock();
        match records.iter_mut().find(|r| r.id == record.id) {
            Some(old) => old.state = AgentState::Running,
            None => records.push(record),
        }
    }

    /// Records how a run ended. When messages came in after the runner
    /// last looked, the subagent stays running and they are returned: the
    /// caller continues it with them.
    pub(crate) fn ended(
        &self,
        id: &str,
        state: AgentState,
        transcript: Option<Vec<Value>>,
    ) -> Option<(AgentRecord, Vec<Letter>)> {
        let mut records = self.records.lock();
        let record = records.iter_mut().find(|r| r.id == id)?;
        if transcript.is_some() {
            record.transcript = transcript;
        }
        let unread = record.inbox.take_all();
        if state == AgentState::Finished && !unread.is_empty() {
            return Some((record.clone(), unread));
        }
        record.state = state;
        None
    }

    /// Finds `to` (an id, else a launch name) and, in the same step,
    /// queues `letter` for it or claims it for a resumed run. `from` is
    /// the sender's own id, which it may not message.
    pub(crate) fn deliver(
        &self,
        to: &str,
        from: Option<&str>,
        letter: Letter,
    ) -> Result<Delivery, String> {
        let mut records = self.records.lock();
        let by_id = records.iter().position(|r| r.id == to);
        let index = match by_id {
            Some(i) => i,
            None => {
                let named: Vec<usize> = records
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| r.name.as_deref() == Some(to))
                    .map(|(i, _)| i)
                    .collect();
                match named.as_slice() {
                    [i] => *i,
                    [] => return Err(unknown(&records, to)),
                    many => {
                        let ids: Vec<&str> = many.iter().map(|i| records[*i].id.as_str()).collect();
                        return Err(format!(
                            "Several agents are named `{to}` ({}); send to one of these ids.",
                            ids.join(", ")
                        ));
                    }
                }
            }
        };
        let record = &mut records[index];
        if from == Some(record.id.as_str()) {
            return Err(format!(
                "`{to}` is this agent itself; a message to yourself reaches no one."
            ));
        }
        if record.state == AgentState::Running {
            record.inbox.push(letter);
            return Ok(Delivery::Queued(record.clone()));
        }
        record.state = AgentState::Running;
        Ok(Delivery::Resume(record.clone()))
    }
}

fn unknown(records: &[AgentRecord], to: &str) -> String {
    if records.is_empty() {
        return format!(
            "No agent `{to}`: this session has started no agents yet. Start one with the \
             Agent tool (give it a `name` to address it later)."
        );
    }
    let known: Vec<String> = records
        .iter()
        .map(|r| match &r.name {
            Some(n) => format!("{n} ({}, {})", r.id, r.state.as_str()),
            None => format!("{} ({})", r.id, r.state.as_str()),
        })
        .collect();
    format!(
        "No agent `{to}` in this session. Known agents: {}. Address one by its name or id.",
        known.join(", ")
    )
}
