//! MCP elicitation in `baton serve`: a server's `elicitation/create` becomes
//! an `elicitation_request` line, and the host answers with an
//! `elicitation` line (accept with content, decline, cancel). When nobody
//! can answer any more (end of input, shutdown), pending and later requests
//! are declined, as with no host at all.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use baton::mcp::{ElicitMode, ElicitRequest, ElicitResponse, Elicitor};
use serde_json::{json, Value};
use std::sync::{Mutex, MutexGuard};
use tokio::sync::oneshot;

use super::output::write_line;

/// The serve host as the MCP servers' elicitor.
#[derive(Default)]
pub(super) struct HostElicitor {
    pending: Mutex<HashMap<u64, oneshot::Sender<ElicitResponse>>>,
    next: AtomicU64,
    closed: AtomicBool,
}

impl HostElicitor {
    fn pending(&self) -> MutexGuard<'_, HashMap<u64, oneshot::Sender<ElicitResponse>>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// An `elicitation` line from the host.
    pub(super) fn answer(&self, msg: &Value) -> Result<(), String> {
        let Some(id) = msg.get("request_id").and_then(Value::as_u64) else {
            return Err("elicitation needs a numeric `request_id`".into());
        };
        let response = match msg.get("action").and_then(Value::as_str) {
            Some("accept") => {
                let content = msg.get("content").cloned().unwrap_or(Value::Null);
                if !(content.is_object() || content.is_null()) {
                    return Err("`content` must be an object (the form's fields)".into());
                }
                ElicitResponse::Accept(content)
            }
            Some("decline") => ElicitResponse::Decline,
            Some("cancel") => ElicitResponse::Cancel,
            _ => return Err("`action` must be \"accept\", \"decline\" or \"cancel\"".into()),
        };
        let Some(waiting) = self.pending().remove(&id) else {
            return Err(format!("no pending elicitation request {id}"));
        };
        // The server may have given up meanwhile; nothing to do then.
        let _ = waiting.send(response);
        Ok(())
    }

    /// Nobody will answer from now on: decline what waits and what comes.
    pub(super) fn close(&self) {
        self.closed.store(true, Ordering::Release);
        for (_, waiting) in self.pending().drain() {
            let _ = waiting.send(ElicitResponse::Decline);
        }
    }
}

#[baton::engine::async_trait]
impl Elicitor for HostElicitor {
    async fn elicit(&self, request: ElicitRequest) -> ElicitResponse {
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let (tx, rx) = oneshot::channel();
        {
            // Checked under the lock `close` drains, so no request slips
            // in after it and waits forever.
            let mut pending = self.pending();
            if self.closed.load(Ordering::Acquire) {
                return ElicitResponse::Decline;
            }
            pending.insert(id, tx);
        }
        let mut line = json!({
            "type": "elicitation_request",
            "request_id": id,
            "server": request.server,
            "message": request.message,
        });
        match request.mode {
            ElicitMode::Form { schema } => {
                line["mode"] = json!("form");
                line["requested_schema"] = schema;
            }
            ElicitMode::Url { url } => {
                line["mode"] = json!("url");
                line["url"] = json!(url);
            }
            // A mode added to the MCP client later: the serve protocol has
            // no line for it, so the request is declined.
            _ => {
                self.pending().remove(&id);
                return ElicitResponse::Decline;
            }
        }
        if write_line(&line).is_err() {
            self.pending().remove(&id);
            return ElicitResponse::Decline;
        }
        rx.await.unwrap_or(ElicitResponse::Decline)
    }
}

/// Installs a new host elicitor for this serve session.
pub(super) fn install() -> Arc<HostElicitor> {
    let host = Arc::new(HostElicitor::default());
    crate::cli::mcp::set_host_elicitor(Some(host.clone()));
    host
}
