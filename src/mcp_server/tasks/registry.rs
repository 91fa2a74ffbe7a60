//! What the server keeps about tasks besides the journal: which were asked
//! to stop, and the open approval questions of SEP-2663 tasks.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};

use baton_actors::PermissionPrompt;
use serde_json::{json, Map, Value};

/// Cancelled tasks remembered (to read `cancelled` even when the call
/// finished anyway).
const MAX_CANCELLED: usize = 10_000;

/// The tasks asked to stop, and the open questions of running ones.
#[derive(Debug, Default)]
pub(crate) struct Tasks {
    cancelled: Mutex<(HashSet<String>, VecDeque<String>)>,
    questions: Mutex<HashMap<String, Questions>>,
}

/// The approval questions of one SEP-2663 task that wait for the client.
#[derive(Clone, Debug, Default)]
pub(crate) struct Questions(Arc<Mutex<(u64, BTreeMap<String, PermissionPrompt>)>>);

impl Questions {
    /// Puts `prompt` to the client (in the task's `inputRequests`).
    pub(crate) fn ask(&self, prompt: PermissionPrompt) {
        let mut guard = self.lock();
        let (next, open) = &mut *guard;
        *next += 1;
        open.insert(format!("approval-{next}"), prompt);
    }

    /// The open questions as `inputRequests`; `None` when there are none.
    pub(super) fn requests(&self) -> Option<Value> {
        let guard = self.lock();
        let open: Map<String, Value> = guard
            .1
            .iter()
            .map(|(key, prompt)| {
                let params = crate::mcp_server::rounds::question_params(&prompt.request);
                (
                    key.clone(),
                    json!({"method": "elicitation/create", "params": params}),
                )
            })
            .collect();
        (!open.is_empty()).then_some(Value::Object(open))
    }

    /// Answers question `key` with the client's elicitation result; false
    /// for a key that is not open (answered before, or never asked).
    pub(super) fn answer(&self, key: &str, response: &Value) -> bool {
        let Some(prompt) = self.lock().1.remove(key) else {
            return false;
        };
        let action = response.get("action").and_then(Value::as_str).unwrap_or("");
        let content = response.get("content").cloned().unwrap_or(Value::Null);
        prompt.answer(crate::mcp_server::call::approval_from(
            action,
            &content,
            &prompt.request,
        ));
        true
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (u64, BTreeMap<String, PermissionPrompt>)> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Tasks {
    pub(super) fn questions(&self, id: &str) -> Option<Questions> {
        self.questions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(id)
            .cloned()
    }

    pub(super) fn set_questions(&self, id: &str, questions: Option<Questions>) {
        let mut map = self.questions.lock().unwrap_or_else(|e| e.into_inner());
        match questions {
            Some(q) => map.insert(id.to_string(), q),
            None => map.remove(id),
        };
    }

    pub(super) fn cancelled(&self, id: &str) -> bool {
        self.lock().0.contains(id)
    }

    pub(super) fn cancel(&self, id: &str) {
        let mut guard = self.lock();
        let (set, order) = &mut *guard;
        if set.insert(id.to_string()) {
            order.push_back(id.to_string());
            while order.len() > MAX_CANCELLED {
                if let Some(old) = order.pop_front() {
                    set.remove(&old);
                }
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (HashSet<String>, VecDeque<String>)> {
        self.cancelled.lock().unwrap_or_else(|e| e.into_inner())
    }
}
