//! Agents that keep running after their call returned (`run_in_background`).
//!
//! Their scope hangs under one session-wide root instead of the Agent
//! call's, so the call can end while they go on; ending the session (the
//! root is one of its cleanups) cancels that root, which reaches every
//! batch they opened and every process in them. When one ends, its report goes to an output file
//! and the host hears of it through a session notification.
//!
//! Each one is also a task of the session's task list (kind `agent`, its
//! agent id as task id): listed beside shells and monitors, stopped by
//! `TaskStop` or the host's stop like them, and owned by the subagent that
//! started it, so it ends when that one does.

use std::path::PathBuf;

use std::sync::Arc;

use baton_engine::cleanup::{SessionCleanup, Stopping};
use baton_engine::{CancelReason, CancelScope, Notification, Session, ToolContext};
use parking_lot::Mutex;
use serde_json::json;

use super::tree::AgentState;
use crate::bash::background::{BackgroundTasks, Finish, Task};
use crate::bash::output::{Capture, CaptureSpec};
use crate::bash::TaskOwner;

/// The session slot holding the root of background agents.
#[derive(Default, Debug)]
pub struct BackgroundAgents {
    root: CancelScope,
}

impl BackgroundAgents {
    /// A new scope for one background agent. The root is one of the
    /// session's cleanups: ending the session cancels it.
    pub fn scope(session: &Session) -> CancelScope {
        session.lifetime_slot::<BackgroundAgents>().root.child()
    }
}

impl SessionCleanup for BackgroundAgents {
    /// Cancelling the root reaches every batch and process of every
    /// background agent; their ends are their own batches' business.
    fn stop(&self) -> Option<Stopping> {
        self.root.cancel(CancelReason::Shutdown);
        None
    }
}

/// Where a background agent's final report goes.
pub fn output_file(session: &Session, agent_id: &str) -> PathBuf {
    session
        .state_dir()
        .join("agents")
        .join(format!("{agent_id}.output"))
}

/// The text the Agent call returns at once.
pub fn launched(agent_id: &str, output: &std::path::Path) -> String {
    format!(
        "Async agent launched successfully.\nagentId: {agent_id}\noutput_file: {}\n\
         The agent is working in the background. You will be notified when it \
         completes; its final report is then in the output file.",
        output.display()
    )
}

/// A background agent's entry in the session's task list.
pub(crate) struct Listed(Arc<Task>);

/// Lists the agent about to run under `ctx.cancel` (its own background
/// scope) as a task; stopping the task cancels that scope.
pub(crate) fn listed(ctx: &ToolContext, agent_id: &str, description: &str) -> Listed {
    let capture = Arc::new(Mutex::new(Capture::new(CaptureSpec {
        inline_chars: 2,
        log_path: output_file(&ctx.session, agent_id),
        log_max_bytes: 0,
        eager_log: false,
    })));
    let task = BackgroundTasks::register(
        &ctx.session,
        agent_id.to_string(),
        "agent",
        description,
        capture,
        TaskOwner::of(&ctx.context),
    );
    let scope = ctx.cancel.clone();
    let watched = task.clone();
    tokio::spawn(async move {
        tokio::select! {
            _ = watched.stop_scope().cancelled() => {
                scope.cancel(CancelReason::Other("the agent's task was stopped".into()));
            }
            _ = watched.finished() => {}
        }
    });
    Listed(task)
}

impl Listed {
    /// Records the end in the task list (and tells the host the list
    /// changed).
    pub(crate) fn ended(&self, session: &Session, state: AgentState) {
        let (status, is_error) = match state {
            AgentState::Finished | AgentState::Running => ("completed", false),
            AgentState::Failed => ("failed", true),
            AgentState::Cancelled => ("stopped", true),
        };
        self.0.complete(
            session,
            Finish {
                line: None,
                exit_code: None,
                is_error,
                status,
            },
        );
    }
}

/// Writes the report and tells the host the agent ended.
pub async fn finished(session: &Session, agent_id: &str, text: &str, state: AgentState) {
    let path = output_file(session, agent_id);
    let written = match path.parent() {
        Some(dir) => tokio::fs::create_dir_all(dir)
            .await
            .and(tokio::fs::write(&path, text).await),
        None => Ok(()),
    };
    let status = match state {
        AgentState::Finished | AgentState::Running => "completed",
        AgentState::Failed => "failed",
        AgentState::Cancelled => "stopped",
    };
    let mut message = format!("Background agent {agent_id} {status}.");
    if let Err(e) = &written {
        message.push_str(&format!(" Its report could not be written ({e}):\n{text}"));
    } else {
        message.push_str(&format!(" Its report is in {}.", path.display()));
    }
    session.notify(Notification {
        kind: "agent_finished".into(),
        message,
        data: Some(json!({
            "agent_id": agent_id,
            "status": status,
            "output_file": path,
            "text": text,
        })),
    });
}
