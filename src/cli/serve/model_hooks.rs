//! `prompt` and `agent` hooks over `baton serve` (docs/serve-protocol.md).
//!
//! They need a model and Baton has none, so each run becomes a question to
//! the host: a `hook_request` line with a fresh `request_id`, the hook's
//! prompt (`$ARGUMENTS` replaced), `model` and the hook input; the host
//! answers with a `hook_answer` line carrying the model's verdict
//! (`{"ok": true}`, `{"ok": false, "reason": …}` or any hook output) or an
//! `error`. The hook's own timeout bounds the wait.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use baton::engine::async_trait;
use baton::engine::hooks::{ModelHookKind, ModelHookRequest, ModelHookRunner};
use serde_json::{json, Value};
use tokio::sync::oneshot;

type Reply = oneshot::Sender<Result<Value, String>>;

/// The hook questions waiting for the host, by request id.
#[derive(Clone, Default)]
pub(super) struct ModelHooks {
    pending: Arc<Mutex<HashMap<String, Reply>>>,
    next: Arc<AtomicU64>,
    /// The host's input ended: no answer will come.
    closed: Arc<std::sync::atomic::AtomicBool>,
}

impl ModelHooks {
    fn pending(&self) -> MutexGuard<'_, HashMap<String, Reply>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A `hook_answer` line.
    pub(super) fn answer(&self, msg: &Value) -> Result<(), String> {
        let id = msg
            .get("request_id")
            .and_then(Value::as_str)
            .ok_or("hook_answer needs a string `request_id`")?;
        let reply = self
            .pending()
            .remove(id)
            .ok_or_else(|| format!("no hook request `{id}` is waiting (answered, or timed out)"))?;
        let verdict = match (msg.get("answer"), msg.get("error")) {
            (_, Some(e)) => Err(e.as_str().map_or_else(|| e.to_string(), str::to_string)),
            (Some(answer), None) => Ok(answer.clone()),
            (None, None) => Err("the host's hook_answer had neither `answer` nor `error`".into()),
        };
        let _ = reply.send(verdict);
        Ok(())
    }

    /// The host's input ended: every waiting hook gets its failure now.
    pub(super) fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        self.pending().clear();
    }
}

#[async_trait]
impl ModelHookRunner for ModelHooks {
    async fn evaluate(&self, request: ModelHookRequest) -> Result<Value, String> {
        if self.closed.load(Ordering::SeqCst) {
            return Err("the host's input has ended, so no model can evaluate it".into());
        }
        let id = format!("hook-{}", self.next.fetch_add(1, Ordering::Relaxed) + 1);
        let (tx, rx) = oneshot::channel();
        self.pending().insert(id.clone(), tx);
        let line = json!({
            "type": "hook_request",
            "request_id": id,
            "kind": match request.kind {
                ModelHookKind::Prompt => "prompt",
                ModelHookKind::Agent => "agent",
            },
            "prompt": request.prompt,
            "model": request.model,
            "input": request.input,
        });
        if let Err(e) = super::output::write_line(&line) {
            self.pending().remove(&id);
            return Err(e.to_string());
        }
        // Dropped on the hook's timeout: forget the question.
        let forget = Forget(self.clone(), id);
        let answer = rx
            .await
            .unwrap_or_else(|_| Err("the host closed the session before answering".into()));
        drop(forget);
        answer
    }
}

/// Removes a question that is no longer awaited.
struct Forget(ModelHooks, String);

impl Drop for Forget {
    fn drop(&mut self) {
        self.0.pending().remove(&self.1);
    }
}
