//! Questions the model asks the user (`AskUserQuestion`), routed to the
//! host.
//!
//! The engine knows no user: a host that can put questions to one installs
//! a [`QuestionAsker`] on the session ([`install`]) or offers it per batch
//! through the services. Without one the tool tells the model nobody can
//! answer and that it should go on with its own best judgement, rather
//! than waiting or failing.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use baton_tool::context::ToolContext;
use baton_tool::session::Session;

/// What the host is asked: the call, and the questions as the model wrote
/// them (Claude Code's `AskUserQuestionInput.questions`, already checked).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QuestionRequest {
    /// The `tool_use` id of the asking call.
    pub call_id: String,
    /// The questions, each with its options, as the model wrote them.
    pub questions: Value,
    /// Ids of the `Agent` calls the asking call runs under, outermost first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agent_chain: Vec<String>,
}

/// The host's answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
#[non_exhaustive]
pub enum QuestionAnswer {
    /// Question text → answer; several choices of a multi-select question
    /// joined with ", " (Claude Code's shape). `annotations` and
    /// `response` are passed through to the result.
    Answered {
        /// Question text → the chosen answer(s).
        answers: BTreeMap<String, String>,
        /// Notes the user attached to answers, passed through as given.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Value>,
        /// Free text from the user beside the answers.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        response: Option<String>,
    },
    /// The user would not answer (or closed the dialog).
    Declined {
        /// Why, if the user said.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// Nobody can answer (no user behind the host, the host went away).
    Unavailable,
}

/// Puts questions to the user.
#[async_trait]
pub trait QuestionAsker: Send + Sync {
    /// Puts `request` to the user and waits for the answer.
    async fn ask(&self, request: QuestionRequest) -> QuestionAnswer;

    /// The call `call_id` was interrupted while its question waited: the
    /// host should close it (an answer now would reach nobody).
    fn withdraw(&self, _call_id: &str) {}
}

/// The asker, as a session slot or a per-batch service.
#[derive(Clone)]
pub struct QuestionService(pub Arc<dyn QuestionAsker>);

// Not derived: the asker is a trait object.
baton_tool::debug_fields! { QuestionService { .. } }

/// Makes `asker` answer the questions of every call of `session`.
pub fn install(session: &Session, asker: Arc<dyn QuestionAsker>) {
    session.slots().insert(Arc::new(QuestionService(asker)));
}

/// The asker for a call: the batch's, else the session's.
pub fn asker_for(ctx: &ToolContext) -> Option<Arc<dyn QuestionAsker>> {
    ctx.services
        .get::<QuestionService>()
        .or_else(|| ctx.session.slots().get::<QuestionService>())
        .map(|s| s.0.clone())
}
