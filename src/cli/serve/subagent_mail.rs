//! Messages to a subagent the host runs (`SendMessage`) over `baton serve`.
//!
//! The host owns the subagent's conversation, so each message is written
//! as a `subagent_message` line as soon as it arrives; the host adds it to
//! that subagent's next turn. A message that arrives after the host's
//! `subagent_result` is read by no one here: the Agent tool finds it still
//! unread and resumes the subagent (a `subagent_request` with `resume`).

use std::sync::Arc;

use baton::engine::subagent_inbox::Inbox;
use serde_json::json;

/// Writes each message of `inbox` until the task is aborted (the
/// subagent's run ended).
pub(super) async fn forward(inbox: Arc<Inbox>, agent_id: String) {
    loop {
        inbox.arrived().await;
        for letter in inbox.take_all() {
            let line = json!({
                "type": "subagent_message",
                "agent_id": agent_id,
                "from": letter.from,
                "summary": letter.summary,
                "message": letter.message,
                "text": letter.text(),
            });
            // A closed stdout ends the session anyway; nothing to do here.
            let _ = super::output::write_line(&line);
        }
    }
}
