//! Agents that keep running after their call returned (`run_in_background`).
//!
//! Their scope hangs under one session-wide root instead of the Agent
//! call's, so the call can end while they go on; [`stop_all`] (engine
//! shutdown) cancels that root, which reaches every batch they opened and
//! every process in them. When one ends, its report goes to an output file
//! and the host hears of it through a session notification.

use std::path::PathBuf;

use baton_engine::{CancelReason, CancelScope, Notification, Session};
use serde_json::json;

/// The session slot holding the root of background agents.
#[derive(Default)]
pub struct BackgroundAgents {
    root: CancelScope,
}

impl BackgroundAgents {
    /// A new scope for one background agent.
    pub fn scope(session: &Session) -> CancelScope {
        session
            .slots()
            .get_or_default::<BackgroundAgents>()
            .root
            .child()
    }
}

/// Stops every background agent of the session (engine shutdown).
pub fn stop_all(session: &Session) {
    if let Some(agents) = session.slots().get::<BackgroundAgents>() {
        agents.root.cancel(CancelReason::Shutdown);
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

/// Writes the report and tells the host the agent ended.
pub async fn finished(session: &Session, agent_id: &str, text: &str, is_error: bool) {
    let path = output_file(session, agent_id);
    let written = match path.parent() {
        Some(dir) => tokio::fs::create_dir_all(dir)
            .await
            .and(tokio::fs::write(&path, text).await),
        None => Ok(()),
    };
    let status = if is_error { "failed" } else { "completed" };
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
