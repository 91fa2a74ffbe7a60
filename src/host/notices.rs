//! Session notifications the model should hear of before its next turn:
//! a background task or agent that ended, a monitor's events. They are
//! written as Claude Code writes them, one `<task-notification>` each
//! (task id, status, summary, output file), and put after the turn's tool
//! results. Host-only notices (`tasks_changed`) are not shown to the model.

use baton_engine::Notification;
use serde_json::Value;
use std::sync::Mutex;
use tokio::sync::broadcast::{self, error::TryRecvError};

/// Collects notifications from its creation on.
#[derive(Debug)]
pub struct Notices {
    rx: Mutex<broadcast::Receiver<Notification>>,
}

impl Notices {
    /// Collects what `rx` receives from now on.
    pub fn new(rx: broadcast::Receiver<Notification>) -> Self {
        Notices { rx: Mutex::new(rx) }
    }

    /// The texts of the notifications received since the last call.
    pub fn take(&self) -> Vec<String> {
        let mut rx = self.rx.lock().unwrap_or_else(|e| e.into_inner());
        let mut texts = Vec::new();
        loop {
            match rx.try_recv() {
                Ok(n) => texts.extend(render(&n)),
                // Some were dropped (a flood): say so rather than pretend.
                Err(TryRecvError::Lagged(n)) => {
                    texts.push(format!("({n} notifications were dropped.)"))
                }
                Err(TryRecvError::Empty | TryRecvError::Closed) => break,
            }
        }
        texts
    }
}

/// The text the model reads for `n`, if it is one for the model.
pub fn render(n: &Notification) -> Option<String> {
    let data = n.data.as_ref().unwrap_or(&Value::Null);
    let field = |k: &str| data.get(k).and_then(Value::as_str).map(str::to_string);
    let id = match n.kind.as_str() {
        "background_task_finished" | "monitor_event" | "monitor_finished" => field("task_id")?,
        "agent_finished" => field("agent_id")?,
        _ => return None,
    };
    let status = field("status").unwrap_or_else(|| "running".into());
    let mut text = format!(
        "<task-notification>\n<task-id>{}</task-id>\n<status>{}</status>\n<summary>{}</summary>\n",
        escape(&id),
        escape(&status),
        escape(&n.message)
    );
    if let Some(events) = field("events") {
        text.push_str(&format!("<event>{}</event>\n", escape(&events)));
    }
    if let Some(file) = field("output_file") {
        text.push_str(&format!("<output-file>{}</output-file>\n", escape(&file)));
    }
    text.push_str("</task-notification>");
    Some(text)
}

/// Output of a command must not close the element it is in.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_finished_task_becomes_a_task_notification() {
        let n = Notification {
            kind: "background_task_finished".into(),
            message: "Background task shell-1 (Bash(echo </x>)) completed.".into(),
            data: Some(
                json!({"task_id": "shell-1", "status": "completed", "output_file": "/s/shell-1.log"}),
            ),
        };
        let text = render(&n).unwrap();
        assert!(text.starts_with(
            "<task-notification>\n<task-id>shell-1</task-id>\n<status>completed</status>"
        ));
        assert!(text.contains("Bash(echo &lt;/x&gt;)"));
        assert!(text.contains("<output-file>/s/shell-1.log</output-file>"));
        let changed = Notification {
            kind: "tasks_changed".into(),
            message: String::new(),
            data: Some(json!({"tasks": []})),
        };
        assert!(render(&changed).is_none());
    }
}
