//! MCP elicitation in `baton serve`: a server's `elicitation/create` becomes
//! an `elicitation_request` line, and the host answers with an
//! `elicitation` line (accept with content, decline, cancel). When nobody
//! can answer any more (end of input, shutdown), pending and later requests
//! are declined, as with no host at all.

use std::sync::Arc;

use baton::mcp::{ElicitMode, ElicitRequest, ElicitResponse, Elicitor};
use serde_json::{json, Value};

use super::output::write_line;
use super::pending::{request_id, Pending};

/// The serve host as the MCP servers' elicitor.
#[derive(Default)]
pub(super) struct HostElicitor {
    pending: Pending<ElicitResponse>,
}

impl HostElicitor {
    /// An `elicitation` line from the host.
    pub(super) fn answer(&self, msg: &Value) -> Result<(), String> {
        let id = request_id(msg, "elicitation")?;
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
        if !self.pending.settle(id, response) {
            return Err(format!("no pending elicitation request {id}"));
        }
        Ok(())
    }

    /// Nobody will answer from now on: decline what waits and what comes.
    pub(super) fn close(&self) {
        self.pending.close(|| ElicitResponse::Decline);
    }
}

#[baton::engine::async_trait]
impl Elicitor for HostElicitor {
    async fn elicit(&self, request: ElicitRequest) -> ElicitResponse {
        let Some((id, rx)) = self.pending.open() else {
            return ElicitResponse::Decline;
        };
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
                self.pending.forget(id);
                return ElicitResponse::Decline;
            }
        }
        if write_line(&line).is_err() {
            self.pending.forget(id);
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
