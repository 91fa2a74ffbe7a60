//! `AskUserQuestion`: the model asks the user multiple-choice questions.
//!
//! The schema is Claude Code's (`sdk-tools.d.ts`): 1–4 questions, each with
//! a header of at most 12 characters and 2–4 options, single or multiple
//! choice. The questions go to the host's [`QuestionAsker`](baton_engine::questions::QuestionAsker); the answers
//! come back keyed by question text, as Claude Code gives them, both as
//! text for the model and as the structured `tool_response` hooks see.
//! With no one to ask, the result says so and tells the model to go on.

mod schema;

use std::collections::{BTreeMap, HashSet};

use baton_engine::questions::{self, QuestionAnswer, QuestionRequest};
use baton_engine::subagent::AgentChain;
use baton_engine::{
    async_trait, InterruptBehavior, Tool, ToolContext, ToolDef, ToolError, ToolLogic, ToolOutput,
    WorkKind,
};
use serde_json::{json, Value};

#[cfg(test)]
mod tests;

/// Claude Code's limit on a question's header chip.
pub const MAX_HEADER_CHARS: usize = 12;

const DESCRIPTION: &str = "Asks the user one to four multiple-choice questions and \
waits for the answers. Use it when a decision is the user's to make (a preference, an \
ambiguous requirement, a choice between approaches) rather than guessing. Each question \
has a short `header` (at most 12 characters), 2 to 4 `options` with a `label` and a \
`description`, and `multiSelect` when several options may be chosen. Do not add an \
\"Other\" option: the user can always answer in their own words.";

/// The `AskUserQuestion` tool: multiple-choice questions to the user,
/// answered through the host's question service.
pub fn tool() -> Result<Tool, baton_engine::schema::InvalidSchema> {
    let def = ToolDef::new("AskUserQuestion", DESCRIPTION)
        .search_hint("ask the user a question choice clarify preference")
        .interrupt(InterruptBehavior::Cancel)
        .work_kind(WorkKind::Wait);
    Tool::raw(def, schema::input(), AskUserQuestion)
}

struct AskUserQuestion;

#[async_trait]
impl ToolLogic<Value> for AskUserQuestion {
    fn is_concurrency_safe(&self, _input: &Value) -> bool {
        true
    }

    fn is_read_only(&self, _input: &Value) -> bool {
        true
    }

    async fn validate_input(&self, input: &Value, _ctx: &ToolContext) -> Result<(), String> {
        check(input)
    }

    async fn call(&self, input: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let questions = input.get("questions").cloned().unwrap_or(Value::Null);
        let Some(asker) = questions::asker_for(&ctx) else {
            return Ok(unanswered(
                &questions,
                "No one can answer questions in this session (the host has no way to ask the user).",
            ));
        };
        let request = QuestionRequest {
            call_id: ctx.call_id.clone(),
            questions: questions.clone(),
            agent_chain: AgentChain::of(&ctx.context).call_ids(),
        };
        let answer = tokio::select! {
            answer = asker.ask(request) => answer,
            _ = ctx.cancel.cancelled() => {
                asker.withdraw(&ctx.call_id);
                return Err(ToolError::new("The question was withdrawn: the call was interrupted before the user answered."));
            }
        };
        Ok(match answer {
            QuestionAnswer::Answered {
                answers,
                annotations,
                response,
            } => answered(&questions, answers, annotations, response),
            QuestionAnswer::Declined { reason } => {
                let mut text = "The user declined to answer.".to_string();
                if let Some(reason) = reason.filter(|r| !r.trim().is_empty()) {
                    text.push_str(&format!(" They said: {reason}"));
                }
                unanswered(&questions, &text)
            }
            QuestionAnswer::Unavailable => {
                unanswered(&questions, "No one was available to answer the questions.")
            }
            // An answer this tool does not know (added to the engine later)
            // is no answer: the model is not told the user chose anything.
            _ => unanswered(&questions, "No one was available to answer the questions."),
        })
    }
}

/// What the schema cannot say: header length, and question texts and
/// option labels that would collide as answer keys.
fn check(input: &Value) -> Result<(), String> {
    let mut problems = Vec::new();
    let mut texts = HashSet::new();
    for (i, q) in input
        .get("questions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let n = i + 1;
        let text = q.get("question").and_then(Value::as_str).unwrap_or("");
        if text.trim().is_empty() {
            problems.push(format!("question {n}: `question` is empty"));
        } else if !texts.insert(text) {
            problems.push(format!(
                "question {n}: the same question text appears twice (answers are keyed by it)"
            ));
        }
        let header = q.get("header").and_then(Value::as_str).unwrap_or("");
        let chars = header.chars().count();
        if chars > MAX_HEADER_CHARS {
            problems.push(format!(
                "question {n}: `header` {header:?} has {chars} characters; at most {MAX_HEADER_CHARS} are allowed"
            ));
        }
        let mut labels = HashSet::new();
        for option in q
            .get("options")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let label = option.get("label").and_then(Value::as_str).unwrap_or("");
            if label.trim().is_empty() {
                problems.push(format!("question {n}: an option has an empty `label`"));
            } else if !labels.insert(label) {
                problems.push(format!(
                    "question {n}: option label {label:?} appears twice"
                ));
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

fn answered(
    questions: &Value,
    answers: BTreeMap<String, String>,
    annotations: Option<Value>,
    response: Option<String>,
) -> ToolOutput {
    let pairs: Vec<String> = answers
        .iter()
        .map(|(q, a)| format!("\"{q}\"=\"{a}\""))
        .collect();
    let mut text = if pairs.is_empty() {
        "The user gave no structured answer.".to_string()
    } else {
        format!("The user answered your questions: {}.", pairs.join(", "))
    };
    if let Some(r) = response.as_ref().filter(|r| !r.trim().is_empty()) {
        text.push_str(&format!(" They also wrote: {r}"));
    }
    text.push_str(" Continue with these answers in mind.");
    let mut out = json!({"questions": questions, "answers": answers});
    if let Some(a) = annotations {
        out["annotations"] = a;
    }
    if let Some(r) = response {
        out["response"] = json!(r);
    }
    ToolOutput::text(text).with_response(out)
}

/// A result with no answers: the model is told to go on without them.
fn unanswered(questions: &Value, why: &str) -> ToolOutput {
    let text = format!(
        "{why} Go on without the answers: choose what seems most reasonable, say which \
         assumptions you made, and let the user correct them later."
    );
    ToolOutput::text(text).with_response(json!({"questions": questions, "answers": {}}))
}
