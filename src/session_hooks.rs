//! Hook events the host owns, fired through the engine.
//!
//! Baton runs the tool-call events itself; the others belong to whoever
//! runs the model loop (the host) or the session (`baton serve`, `baton
//! run`). [`Engine::fire_hook`] builds Claude Code's input for them
//! (session id, transcript, cwd, mode, plus the event's own fields) and
//! runs the matching hooks from settings files and plugins.

use baton_engine::hooks::{HookEvent, HookInput, HookOutcome};
use serde_json::{json, Map, Value};

use crate::Engine;

impl Engine {
    /// Runs the hooks of `event` with Claude Code's input; `fields` are
    /// the event's own (`prompt` for UserPromptSubmit, `source` for
    /// SessionStart, `stop_hook_active` for Stop, `message` and
    /// `notification_type` for Notification, `trigger` and
    /// `custom_instructions` for PreCompact…). In the outcome,
    /// `decision: Deny` means "block" (reject the prompt, keep the model
    /// going), `additional_context` is for the model, `system_messages`
    /// for the user.
    pub async fn fire_hook(&self, event: HookEvent, fields: Map<String, Value>) -> HookOutcome {
        let runtime = self.runtime();
        let context = runtime.context();
        let session = runtime.session();
        let mut input = HookInput::event(
            event,
            session.id(),
            context.cwd.display().to_string(),
            fields,
        );
        input.permission_mode = context.permission_mode.to_string();
        input.transcript_path = session
            .transcript_path()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        runtime.pipeline().hooks().run(&input).await
    }

    /// `SessionStart` with `source` ("startup", "resume", "clear",
    /// "compact").
    pub async fn session_start(&self, source: &str) -> HookOutcome {
        let mut fields = Map::new();
        fields.insert("source".into(), json!(source));
        self.fire_hook(HookEvent::SessionStart, fields).await
    }

    /// `SessionEnd` with `reason` ("clear", "logout", "prompt_input_exit",
    /// "other").
    pub async fn session_end(&self, reason: &str) -> HookOutcome {
        let mut fields = Map::new();
        fields.insert("reason".into(), json!(reason));
        self.fire_hook(HookEvent::SessionEnd, fields).await
    }
}
