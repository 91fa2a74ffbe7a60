//! The `Elicitation` and `ElicitationResult` hook events' answers (Claude
//! Code's `hookSpecificOutput.action` / `content`): a hook may answer an MCP
//! server's question itself, or override the user's answer before it is
//! sent. The MCP client fires the events (see `baton::mcp_host`).

use serde_json::{Map, Value};

use super::HookEvent;

/// What a hook answered.
#[derive(Clone, Debug, PartialEq)]
pub enum ElicitationAnswer {
    /// Accept, with the form's content (an object) if the hook gave one.
    Accept(Option<Value>),
    /// Say no to the server.
    Decline,
    /// Dismiss the request without an answer.
    Cancel,
}

impl ElicitationAnswer {
    /// Of two hooks' answers the more cautious holds (decline, then cancel,
    /// then accept): one hook cannot accept what another refused.
    pub fn merge(a: Option<Self>, b: Option<Self>) -> Option<Self> {
        let rank = |x: &ElicitationAnswer| match x {
            ElicitationAnswer::Decline => 2,
            ElicitationAnswer::Cancel => 1,
            ElicitationAnswer::Accept(_) => 0,
        };
        match (a, b) {
            (Some(a), Some(b)) if rank(&b) > rank(&a) => Some(b),
            (Some(a), _) => Some(a),
            (None, b) => b,
        }
    }
}

/// Reads `action` / `content` of an Elicitation or ElicitationResult hook.
pub(crate) fn read(
    event: HookEvent,
    specific: &Map<String, Value>,
    problems: &mut Vec<String>,
) -> Option<ElicitationAnswer> {
    if !matches!(event, HookEvent::Elicitation | HookEvent::ElicitationResult) {
        return None;
    }
    let content = match specific.get("content") {
        None | Some(Value::Null) => None,
        Some(v @ Value::Object(_)) => Some(v.clone()),
        Some(_) => {
            problems.push("returned a content that is not an object".into());
            return None;
        }
    };
    match specific.get("action") {
        None | Some(Value::Null) => None,
        Some(Value::String(a)) if a == "accept" => Some(ElicitationAnswer::Accept(content)),
        Some(Value::String(a)) if a == "decline" => Some(ElicitationAnswer::Decline),
        Some(Value::String(a)) if a == "cancel" => Some(ElicitationAnswer::Cancel),
        Some(other) => {
            problems.push(format!(
                "returned action {other} (expected accept, decline or cancel)"
            ));
            None
        }
    }
}
