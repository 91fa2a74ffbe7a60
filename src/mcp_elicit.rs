//! The `Elicitation` and `ElicitationResult` hooks around the host's
//! elicitor (Claude Code's events): before the host is asked, hooks
//! matching the server's name may answer for it; after the answer, hooks
//! may override it before it goes to the server. Installed on the MCP
//! servers of an engine when it is built.

use std::sync::Arc;

use baton_engine::hooks::{ElicitationAnswer, HookEvent, HookInput, HookRegistry};
use baton_mcp::{ElicitMode, ElicitRequest, ElicitResponse, Elicitor};
use serde_json::{json, Map, Value};

use crate::Engine;

/// What a hook input carries besides the event's own fields. A snapshot
/// taken when the engine is built: holding the engine here would make the
/// session own itself (session → servers → elicitor → session).
struct Base {
    session_id: String,
    transcript_path: String,
    cwd: String,
    permission_mode: String,
}

struct HookedElicitor {
    hooks: HookRegistry,
    base: Base,
    host: Option<Arc<dyn Elicitor>>,
}

impl HookedElicitor {
    fn input(&self, event: HookEvent, fields: Map<String, Value>) -> HookInput {
        let mut input = HookInput::event(
            event,
            self.base.session_id.clone(),
            self.base.cwd.clone(),
            fields,
        );
        input.transcript_path = self.base.transcript_path.clone();
        input.permission_mode = self.base.permission_mode.clone();
        input
    }
}

fn response_of(answer: ElicitationAnswer) -> ElicitResponse {
    match answer {
        ElicitationAnswer::Accept(content) => {
            ElicitResponse::Accept(content.unwrap_or_else(|| json!({})))
        }
        ElicitationAnswer::Decline => ElicitResponse::Decline,
        ElicitationAnswer::Cancel => ElicitResponse::Cancel,
    }
}

#[baton_engine::async_trait]
impl Elicitor for HookedElicitor {
    async fn elicit(&self, request: ElicitRequest) -> ElicitResponse {
        let server = request.server.clone();
        let mode = match &request.mode {
            ElicitMode::Form { .. } => "form",
            ElicitMode::Url { .. } => "url",
            // A mode added to the MCP client later: hooks are not told of a
            // mode they cannot know; the host answers (without one, the
            // request is declined, as any unanswerable one is).
            _ => {
                return match &self.host {
                    Some(host) => host.elicit(request).await,
                    None => ElicitResponse::Decline,
                }
            }
        };
        let mut response = None;
        if self.hooks.has_any(HookEvent::Elicitation, &server) {
            let mut fields = Map::new();
            fields.insert("mcp_server_name".into(), json!(server));
            fields.insert("message".into(), json!(request.message));
            fields.insert("mode".into(), json!(mode));
            match &request.mode {
                ElicitMode::Form { schema } => {
                    fields.insert("requested_schema".into(), schema.clone());
                }
                ElicitMode::Url { url } => {
                    fields.insert("url".into(), json!(url));
                }
                // Returned above.
                _ => {}
            }
            let outcome = self
                .hooks
                .run(&self.input(HookEvent::Elicitation, fields))
                .await;
            response = outcome.elicitation.map(response_of);
        }
        let mut response = match (response, &self.host) {
            (Some(answered), _) => answered,
            (None, Some(host)) => host.elicit(request).await,
            (None, None) => ElicitResponse::Decline,
        };
        if self.hooks.has_any(HookEvent::ElicitationResult, &server) {
            let mut fields = Map::new();
            fields.insert("mcp_server_name".into(), json!(server));
            fields.insert("mode".into(), json!(mode));
            let (action, content) = match &response {
                ElicitResponse::Accept(content) => ("accept", Some(content.clone())),
                ElicitResponse::Decline => ("decline", None),
                ElicitResponse::Cancel => ("cancel", None),
            };
            fields.insert("action".into(), json!(action));
            if let Some(content) = content.filter(|c| c.is_object()) {
                fields.insert("content".into(), content);
            }
            let outcome = self
                .hooks
                .run(&self.input(HookEvent::ElicitationResult, fields))
                .await;
            if let Some(answer) = outcome.elicitation {
                response = response_of(answer);
            }
        }
        response
    }
}

/// Puts the engine's Elicitation hooks around its MCP servers' elicitor.
pub(crate) fn install(engine: &Engine) {
    let Some(mcp) = engine.mcp() else { return };
    let runtime = engine.runtime();
    let hooks = runtime.pipeline().hooks().clone();
    if hooks.is_empty() {
        return;
    }
    let context = runtime.context();
    let session = runtime.session();
    let base = Base {
        session_id: session.id().to_string(),
        transcript_path: session
            .transcript_path()
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
        cwd: context.cwd.display().to_string(),
        permission_mode: context.permission_mode.to_string(),
    };
    mcp.wrap_elicitor(|host| Arc::new(HookedElicitor { hooks, base, host }));
}
