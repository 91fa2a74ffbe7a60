//! `prompt` and `agent` hooks over `baton serve` (docs/serve-protocol.md).
//!
//! They need a model and Baton has none, so each run becomes a question to
//! the host: a `hook_request` line with a fresh `request_id`, the hook's
//! prompt (`$ARGUMENTS` replaced), `model` and the hook input; the host
//! answers with a `hook_answer` line carrying the model's verdict
//! (`{"ok": true}`, `{"ok": false, "reason": …}` or any hook output) or an
//! `error`. The hook's own timeout bounds the wait.

use std::sync::Arc;

use baton::engine::async_trait;
use baton::engine::hooks::{ModelHookKind, ModelHookRequest, ModelHookRunner};
use serde_json::{json, Value};

use super::pending::Pending;

/// What a waiting hook gets when the host's input ends.
const CLOSED: &str = "the host closed the session before answering";

/// The hook questions waiting for the host, by request id (`hook-N` on
/// the wire).
#[derive(Clone, Default)]
pub(super) struct ModelHooks {
    pending: Arc<Pending<Result<Value, String>>>,
}

impl ModelHooks {
    /// A `hook_answer` line.
    pub(super) fn answer(&self, msg: &Value) -> Result<(), String> {
        let id = msg
            .get("request_id")
            .and_then(Value::as_str)
            .ok_or("hook_answer needs a string `request_id`")?;
        let verdict = match (msg.get("answer"), msg.get("error")) {
            (_, Some(e)) => Err(e.as_str().map_or_else(|| e.to_string(), str::to_string)),
            (Some(answer), None) => Ok(answer.clone()),
            (None, None) => Err("the host's hook_answer had neither `answer` nor `error`".into()),
        };
        let number = id.strip_prefix("hook-").and_then(|n| n.parse().ok());
        if !number.is_some_and(|n| self.pending.settle(n, verdict)) {
            return Err(format!(
                "no hook request `{id}` is waiting (answered, or timed out)"
            ));
        }
        Ok(())
    }

    /// The host's input ended: every waiting hook gets its failure now.
    pub(super) fn close(&self) {
        self.pending.close(|| Err(CLOSED.into()));
    }
}

#[async_trait]
impl ModelHookRunner for ModelHooks {
    async fn evaluate(&self, request: ModelHookRequest) -> Result<Value, String> {
        let Some((number, rx)) = self.pending.open() else {
            return Err("the host's input has ended, so no model can evaluate it".into());
        };
        let line = json!({
            "type": "hook_request",
            "request_id": format!("hook-{number}"),
            "kind": match request.kind {
                ModelHookKind::Prompt => "prompt",
                ModelHookKind::Agent => "agent",
            },
            "prompt": request.prompt,
            "model": request.model,
            "input": request.input,
        });
        if let Err(e) = super::output::write_line(&line) {
            self.pending.forget(number);
            return Err(e.to_string());
        }
        // Dropped on the hook's timeout: forget the question.
        let forget = Forget(self.clone(), number);
        let answer = rx.await.unwrap_or_else(|_| Err(CLOSED.into()));
        drop(forget);
        answer
    }
}

/// Removes a question that is no longer awaited.
struct Forget(ModelHooks, u64);

impl Drop for Forget {
    fn drop(&mut self) {
        self.0.pending.forget(self.1);
    }
}
