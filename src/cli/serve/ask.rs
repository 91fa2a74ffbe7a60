//! `AskUserQuestion` in `baton serve`: the model's questions become a
//! `question_request` line, and the host answers with a `question_answer`
//! line (`decision`: `answer` with `answers`, or `decline`); a question
//! whose call is interrupted is withdrawn with `question_cancelled`. When nobody
//! can answer any more (end of input, shutdown), pending and later
//! questions get "no one can answer", so the model goes on without.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use baton::engine::questions::{QuestionAnswer, QuestionAsker, QuestionRequest};
use serde_json::{json, Value};

use super::output::write_line;
use super::pending::{request_id, Pending};

/// The serve host as the session's question asker.
#[derive(Default)]
pub(super) struct HostQuestions {
    pending: Pending<QuestionAnswer>,
    /// Which call asked each pending question, to withdraw it.
    asked_by: Mutex<HashMap<String, u64>>,
}

impl HostQuestions {
    /// A `question_answer` line from the host.
    pub(super) fn answer(&self, msg: &Value) -> Result<(), String> {
        let id = request_id(msg, "question_answer")?;
        let answer = parse(msg)?;
        if !self.pending.settle(id, answer) {
            return Err(format!("no pending question request {id}"));
        }
        Ok(())
    }

    /// Nobody will answer from now on.
    pub(super) fn close(&self) {
        self.pending.close(|| QuestionAnswer::Unavailable);
    }
}

/// The answer a `question_answer` line carries. A field of the wrong type
/// makes the line an error rather than an empty answer.
fn parse(msg: &Value) -> Result<QuestionAnswer, String> {
    match msg.get("decision").and_then(Value::as_str) {
        Some("answer") => {
            let mut answers = BTreeMap::new();
            let Some(given) = msg.get("answers").and_then(Value::as_object) else {
                return Err("`answers` must be an object: question text → answer".into());
            };
            for (question, answer) in given {
                let Some(text) = answer.as_str() else {
                    return Err(format!(
                        "the answer to {question:?} must be a string (join several choices with \", \")"
                    ));
                };
                answers.insert(question.clone(), text.to_string());
            }
            let annotations = match msg.get("annotations") {
                None | Some(Value::Null) => None,
                Some(v @ Value::Object(_)) => Some(v.clone()),
                Some(_) => return Err("`annotations` must be an object".into()),
            };
            let response = match msg.get("response") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s.clone()),
                Some(_) => return Err("`response` must be a string".into()),
            };
            Ok(QuestionAnswer::Answered {
                answers,
                annotations,
                response,
            })
        }
        Some("decline") => match msg.get("reason") {
            None | Some(Value::Null) => Ok(QuestionAnswer::Declined { reason: None }),
            Some(Value::String(s)) => Ok(QuestionAnswer::Declined {
                reason: Some(s.clone()),
            }),
            Some(_) => Err("`reason` must be a string".into()),
        },
        _ => Err("`decision` must be \"answer\" or \"decline\"".into()),
    }
}

#[baton::engine::async_trait]
impl QuestionAsker for HostQuestions {
    async fn ask(&self, request: QuestionRequest) -> QuestionAnswer {
        let Some((id, rx)) = self.pending.open() else {
            return QuestionAnswer::Unavailable;
        };
        self.asked_by
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(request.call_id.clone(), id);
        let mut line = json!({
            "type": "question_request",
            "request_id": id,
            "tool_use_id": &request.call_id,
            "questions": request.questions,
        });
        if !request.agent_chain.is_empty() {
            line["agent_chain"] = json!(request.agent_chain);
        }
        if write_line(&line).is_err() {
            self.pending.forget(id);
            return QuestionAnswer::Unavailable;
        }
        let answer = rx.await.unwrap_or(QuestionAnswer::Unavailable);
        self.asked_by
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&request.call_id);
        answer
    }

    fn withdraw(&self, call_id: &str) {
        let id = self
            .asked_by
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(call_id);
        if let Some(id) = id.filter(|id| self.pending.forget(*id)) {
            let _ = write_line(&json!({
                "type": "question_cancelled",
                "request_id": id,
                "tool_use_id": call_id,
            }));
        }
    }
}

/// Makes a new host asker answer the questions of `session`.
pub(super) fn install(session: &baton::engine::Session) -> Arc<HostQuestions> {
    let host = Arc::new(HostQuestions::default());
    baton::engine::questions::install(session, host.clone());
    host
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answer_lines_parse_strictly() {
        let ok = parse(&json!({"decision": "answer", "answers": {"A?": "x, y"}})).unwrap();
        assert!(
            matches!(ok, QuestionAnswer::Answered { ref answers, .. } if answers["A?"] == "x, y")
        );
        assert_eq!(
            parse(&json!({"decision": "decline"})).unwrap(),
            QuestionAnswer::Declined { reason: None }
        );
        for bad in [
            json!({"decision": "answer"}),
            json!({"decision": "answer", "answers": {"A?": ["x"]}}),
            json!({"decision": "answer", "answers": {}, "response": 3}),
            json!({"decision": "decline", "reason": false}),
            json!({"answers": {"A?": "x"}}),
        ] {
            assert!(parse(&bad).is_err(), "{bad}");
        }
    }
}
