//! What the client answers and hears: progress routed to the call that
//! asked for it, `tools/list_changed` remembered until the host refreshes,
//! elicitation handed to the host.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use baton_engine::{Progress, ProgressSink};
use parking_lot::Mutex;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ErrorData, Implementation, ProgressNotificationParam, ProgressToken,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use rmcp::ClientHandler;
use serde_json::{json, Value};
use tokio::sync::Notify;

use crate::elicit::{ElicitMode, ElicitRequest, ElicitResponse, Elicitor};

/// What a running call listens to.
#[derive(Clone)]
pub(crate) struct CallWatch {
    pub progress: ProgressSink,
    /// Woken by each progress notification (resets the idle limit).
    pub activity: Arc<Notify>,
    /// The last progress message, for the timeout text.
    pub last: Arc<Mutex<Option<String>>>,
}

pub(crate) struct HandlerInner {
    pub server: String,
    calls: Mutex<HashMap<String, CallWatch>>,
    pub tools_changed: AtomicBool,
    elicitor: Option<Arc<dyn Elicitor>>,
}

/// The `ClientHandler` of one server connection (cheap to clone).
#[derive(Clone)]
pub(crate) struct Handler(pub Arc<HandlerInner>);

pub(crate) fn token_key(token: &ProgressToken) -> String {
    serde_json::to_string(&token.0).unwrap_or_default()
}

impl Handler {
    pub(crate) fn new(server: &str, elicitor: Option<Arc<dyn Elicitor>>) -> Handler {
        Handler(Arc::new(HandlerInner {
            server: server.to_string(),
            calls: Mutex::new(HashMap::new()),
            tools_changed: AtomicBool::new(false),
            elicitor,
        }))
    }

    pub(crate) fn watch(&self, token: &ProgressToken, watch: CallWatch) {
        self.0.calls.lock().insert(token_key(token), watch);
    }

    pub(crate) fn unwatch(&self, token: &ProgressToken) {
        self.0.calls.lock().remove(&token_key(token));
    }

    pub(crate) fn take_tools_changed(&self) -> bool {
        self.0.tools_changed.swap(false, Ordering::AcqRel)
    }
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        // Declared even without a host: the server then hears "declined"
        // instead of failing the call for a missing capability.
        // The tasks extension (SEP-2663): a server may then answer a call
        // with a task, which Baton follows (see crate::tasks).
        let capabilities: ClientCapabilities = serde_json::from_value(json!({
            "elicitation": {"form": {}, "url": {}},
            "extensions": {rmcp::model::TASKS_EXTENSION_ID: {}},
        }))
        .unwrap_or_default();
        ClientConfig::new(
            capabilities,
            Implementation::new("baton", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let watch = self
            .0
            .calls
            .lock()
            .get(&token_key(&params.progress_token))
            .cloned();
        let Some(watch) = watch else { return };
        let message = match (&params.message, params.total) {
            (Some(m), _) => m.clone(),
            (None, Some(total)) => format!("{} of {}", params.progress, total),
            (None, None) => format!("progress {}", params.progress),
        };
        *watch.last.lock() = Some(message.clone());
        watch.activity.notify_one();
        watch.progress.send(Progress {
            message,
            data: Some(json!({"progress": params.progress, "total": params.total})),
        });
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.0.tools_changed.store(true, Ordering::Release);
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        Ok(self.elicit(request).await)
    }
}

impl Handler {
    /// Asks the host (a server's `elicitation/create`, or the same question
    /// asked inside a task, see [`crate::tasks`]); declined without a host.
    pub(crate) async fn elicit(&self, request: ElicitRequestParams) -> ElicitResult {
        let Some(elicitor) = self.0.elicitor.clone() else {
            return ElicitResult::new(ElicitationAction::Decline);
        };
        let value = serde_json::to_value(&request).unwrap_or(Value::Null);
        let message = value["message"].as_str().unwrap_or_default().to_string();
        let mode = match value["mode"].as_str() {
            Some("url") => ElicitMode::Url {
                url: value["url"].as_str().unwrap_or_default().to_string(),
            },
            _ => ElicitMode::Form {
                schema: value.get("requestedSchema").cloned().unwrap_or(Value::Null),
            },
        };
        let schema = match &mode {
            ElicitMode::Form { schema } => Some(schema.clone()),
            ElicitMode::Url { .. } => None,
        };
        let response = elicitor
            .elicit(ElicitRequest {
                server: self.0.server.clone(),
                message,
                mode,
            })
            .await;
        match response {
            ElicitResponse::Accept(content) => {
                // The one place every answer passes (terminal, serve host,
                // library callback, hooks): fields left out get defaults.
                let content = match &schema {
                    Some(schema) => crate::elicit::with_defaults(schema, content),
                    None => content,
                };
                let result = ElicitResult::new(ElicitationAction::Accept);
                match content {
                    Value::Object(map) => result.with_content(Value::Object(map)),
                    _ => result,
                }
            }
            ElicitResponse::Decline => ElicitResult::new(ElicitationAction::Decline),
            ElicitResponse::Cancel => ElicitResult::new(ElicitationAction::Cancel),
        }
    }
}
