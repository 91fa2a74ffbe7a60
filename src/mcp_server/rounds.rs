//! Approvals for clients of protocol 2026-07-28, which has no server-to-client
//! requests: the question travels in the answer (a multi round-trip request,
//! MRTR, SEP-2322).
//!
//! A call that needs approval ends its first round with an `input_required`
//! result carrying the question (a form elicitation) and a sealed
//! `requestState`. The client asks its user and calls the tool again with the
//! answer and the state. The second round runs the call through the whole
//! pipeline again (hooks, rules: the policy may have changed meanwhile), and
//! when the permission stage asks once more, the answer is taken from the
//! retry, provided its state opens.
//!
//! The state is the only thing that makes an answer count, and the client
//! echoes it untouched, so it is treated as hostile input: it is sealed with
//! HMAC-SHA256 over the tool's name and its exact input (an approval of `ls`
//! cannot be replayed for `rm -rf`), it expires after ten minutes, and each
//! one is redeemed once per server process. Workers behind one load balancer
//! share the bearer token, and the key is derived from it, so a retry that
//! lands on another worker still opens; without a token the key is random
//! per process (one process: stdio, or a loopback server).

use std::collections::{HashSet, VecDeque};
use std::io::Read;
use std::sync::Mutex;
use std::time::Duration;

use baton_engine::{Approval, ApprovalRequest};
use rmcp::model::{
    ElicitRequest, InputRequest, InputRequests, InputRequiredResult, InputResponses,
    RequestStateCodec, SealOptions,
};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// The key of the one question in `inputRequests` / `inputResponses`.
pub(super) const QUESTION_KEY: &str = "baton_approval";

/// How long a question stays answerable.
const TTL: Duration = Duration::from_secs(600);

/// How many redeemed states are remembered (oldest forgotten first; by then
/// they have expired in any normal use).
const REMEMBERED: usize = 4096;

/// Domain separation for keys derived from a token.
const KEY_PREFIX: &[u8; 32] = b"baton mcp request-state key v1\0\0";

/// What the sealed state carries (readable by anyone: no secrets).
#[derive(Serialize, Deserialize)]
struct State {
    tool: String,
    nonce: String,
}

/// Seals and redeems approval rounds for one server process.
pub(super) struct Rounds {
    codec: Option<RequestStateCodec>,
    redeemed: Mutex<(HashSet<String>, VecDeque<String>)>,
}

baton_engine::debug_fields! { Rounds as this { enabled: this.codec.is_some() } }

/// What a retry's answer says about the call now asking.
pub(super) enum Answer {
    /// The client answered this very call.
    Given(Approval),
    /// No usable answer: ask (again).
    None,
}

impl Rounds {
    /// Rounds keyed by `secret` (the bearer token), else by random bytes.
    /// Without either (no randomness available), every ask of a 2026-07-28
    /// client stays a denial.
    pub(super) fn new(secret: Option<&str>) -> Rounds {
        let key = match secret {
            Some(token) => Some([KEY_PREFIX.as_slice(), token.as_bytes()].concat()),
            None => random_key(),
        };
        Rounds {
            codec: key.and_then(|k| RequestStateCodec::try_new(k).ok()),
            redeemed: Mutex::new((HashSet::new(), VecDeque::new())),
        }
    }

    /// The first round's answer: the question and its sealed state. `None`
    /// when no key is available.
    pub(super) fn ask(&self, request: &ApprovalRequest) -> Option<InputRequiredResult> {
        let codec = self.codec.as_ref()?;
        let state = State {
            tool: request.tool_name.clone(),
            nonce: nonce()?,
        };
        let bound = bound_to(request);
        let sealed = codec
            .seal_json_with(&state, &SealOptions::new().associated_data(&bound).ttl(TTL))
            .ok()?;
        let question = ElicitRequest::new(super::call::question(request).ok()?);
        let mut requests = InputRequests::new();
        requests.insert(QUESTION_KEY.into(), InputRequest::Elicitation(question));
        Some(InputRequiredResult::new(Some(requests), Some(sealed)))
    }

    /// Reads the client's answer to an earlier round for `request`, if the
    /// retry carries one that opens for exactly this call and was not used.
    pub(super) fn answer(
        &self,
        state: Option<&str>,
        responses: Option<&InputResponses>,
        request: &ApprovalRequest,
    ) -> Answer {
        let (Some(codec), Some(state), Some(responses)) = (&self.codec, state, responses) else {
            return Answer::None;
        };
        let bound = bound_to(request);
        let Ok(opened) = codec.open_json_with::<State>(state, &bound) else {
            return Answer::None;
        };
        if opened.tool != request.tool_name || !self.redeem(&opened.nonce) {
            return Answer::None;
        }
        let Some(reply) = responses.get(QUESTION_KEY) else {
            return Answer::None;
        };
        let action = reply.get("action").and_then(Value::as_str).unwrap_or("");
        let content = reply.get("content").cloned().unwrap_or(Value::Null);
        Answer::Given(super::call::approval_from(action, &content, request))
    }

    /// Marks `nonce` used; false when it already was.
    fn redeem(&self, nonce: &str) -> bool {
        let mut guard = self.redeemed.lock().unwrap_or_else(|e| e.into_inner());
        let (seen, order) = &mut *guard;
        if !seen.insert(nonce.to_string()) {
            return false;
        }
        order.push_back(nonce.to_string());
        if order.len() > REMEMBERED {
            if let Some(old) = order.pop_front() {
                seen.remove(&old);
            }
        }
        true
    }
}

/// What the seal is bound to: the tool and its exact input.
fn bound_to(request: &ApprovalRequest) -> Vec<u8> {
    let input = serde_json::to_vec(&request.input).unwrap_or_default();
    [request.tool_name.as_bytes(), b"\0", input.as_slice()].concat()
}

fn random_key() -> Option<Vec<u8>> {
    let mut key = vec![0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut key))
        .ok()?;
    Some(key)
}

/// 16 random bytes as hex (MCP task ids use it too).
pub(super) fn nonce() -> Option<String> {
    let bytes = random_key()?;
    Some(bytes[..16].iter().map(|b| format!("{b:02x}")).collect())
}

/// The approval question as form elicitation params (the one-line summary
/// shows the command or path the rules judged), for both paths: the
/// first round of 2026-07-28 and the server-to-client request of older
/// versions.
pub(super) fn question_params(request: &ApprovalRequest) -> Value {
    json!({
        "mode": "form",
        "message": format!(
            "Allow {} ? {}\n{}", request.tool_name, request.reason, request.summary
        ),
        "requestedSchema": {
            "type": "object",
            "properties": {
                "allow": {
                    "type": "boolean",
                    "title": "Allow this call",
                    "description": format!("Run {} with this input", request.tool_name),
                    "default": false
                }
            },
            "required": ["allow"]
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(command: &str) -> ApprovalRequest {
        ApprovalRequest {
            call_id: "c".into(),
            tool_name: "Bash".into(),
            input: json!({"command": command}),
            reason: "it writes".into(),
            suggestion: None,
            caller: None,
            agent_chain: Vec::new(),
            parent_call_id: None,
            summary: String::new(),
        }
    }

    fn accept() -> InputResponses {
        let mut r = InputResponses::new();
        r.insert(
            QUESTION_KEY.into(),
            json!({"action": "accept", "content": {"allow": true}}),
        );
        r
    }

    #[test]
    fn an_answer_counts_once_and_only_for_its_own_call() {
        let rounds = Rounds::new(Some("token"));
        let first = rounds.ask(&request("touch a")).unwrap();
        let state = first.request_state.clone().unwrap();
        // Replayed for another input: does not open.
        assert!(matches!(
            rounds.answer(Some(&state), Some(&accept()), &request("rm -rf /")),
            Answer::None
        ));
        // Tampered: does not open.
        let mut bad = state.clone();
        bad.push('x');
        assert!(matches!(
            rounds.answer(Some(&bad), Some(&accept()), &request("touch a")),
            Answer::None
        ));
        // Its own call: allowed, once.
        assert!(matches!(
            rounds.answer(Some(&state), Some(&accept()), &request("touch a")),
            Answer::Given(Approval::Allow)
        ));
        assert!(matches!(
            rounds.answer(Some(&state), Some(&accept()), &request("touch a")),
            Answer::None
        ));
    }

    #[test]
    fn workers_sharing_a_token_open_each_others_state() {
        let one = Rounds::new(Some("shared-token"));
        let two = Rounds::new(Some("shared-token"));
        let other = Rounds::new(Some("another-token"));
        let state = one.ask(&request("touch a")).unwrap().request_state.unwrap();
        assert!(matches!(
            other.answer(Some(&state), Some(&accept()), &request("touch a")),
            Answer::None
        ));
        assert!(matches!(
            two.answer(Some(&state), Some(&accept()), &request("touch a")),
            Answer::Given(Approval::Allow)
        ));
    }

    #[test]
    fn a_declined_question_is_a_denial() {
        let rounds = Rounds::new(None);
        let state = rounds
            .ask(&request("touch a"))
            .unwrap()
            .request_state
            .unwrap();
        let mut declined = InputResponses::new();
        declined.insert(QUESTION_KEY.into(), json!({"action": "decline"}));
        assert!(matches!(
            rounds.answer(Some(&state), Some(&declined), &request("touch a")),
            Answer::Given(Approval::Deny { .. })
        ));
    }
}
