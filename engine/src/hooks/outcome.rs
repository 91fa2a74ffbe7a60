//! What hooks decide, and how the decisions of several hooks combine.
//!
//! Matching hooks run in parallel, so their order says nothing: the merge
//! must not depend on it. The most restrictive decision wins (deny > ask >
//! allow); lists accumulate; two hooks that rewrite the input (or the
//! output) differently are a conflict, reported as an error for that call
//! rather than settled by whichever finished last.

use serde_json::Value;

/// A permission verdict from a PreToolUse hook. `defer` in Claude Code's
/// protocol is read as [`HookDecision::Ask`]: the host's approver decides,
/// with the hook's reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum HookDecision {
    /// The call runs without asking (deny rules still apply).
    Allow,
    /// The host's approver decides.
    Ask,
    /// The call does not run.
    Deny,
}

/// A PermissionRequest hook's answer to "may this call run?".
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum PermissionAnswer {
    /// The call may run.
    Allow {
        /// Replacement input; checked against the schema and the deny
        /// rules again before the call runs.
        updated_input: Option<Value>,
        /// Claude Code `PermissionUpdate` objects, applied for the session.
        updated_permissions: Vec<Value>,
    },
    /// The call may not run.
    Deny {
        /// Why, for the model.
        message: Option<String>,
        /// Stop the whole batch, not only this call.
        interrupt: bool,
    },
}

/// What one hook (or the merge of several) decided.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HookOutcome {
    /// PreToolUse: the hook's permission verdict.
    pub decision: Option<HookDecision>,
    /// Why; shown to the model on deny, to the approver on ask.
    pub reason: Option<String>,
    /// PreToolUse: replacement input (validated against the schema again).
    pub updated_input: Option<Value>,
    /// Text added to what the model sees for this call (or batch).
    pub additional_context: Vec<String>,
    /// PostToolUse: feedback that blocks (`decision: block`, exit 2); shown
    /// to the model with the result.
    pub feedback: Option<String>,
    /// `continue: false`: the turn ends after this batch, with this reason.
    pub stop: Option<String>,
    /// Non-blocking failures (bad JSON, crash, timeout), for the host's log.
    pub errors: Vec<String>,
    /// `systemMessage`: text for the user (not the model).
    pub system_messages: Vec<String>,
    /// PostToolUse `updatedToolOutput`: replaces what the model sees.
    pub updated_output: Option<Value>,
    /// PermissionRequest: the hook answered the question.
    pub permission: Option<PermissionAnswer>,
    /// PermissionDenied: `retry: true`, the model may try again.
    pub retry: bool,
    /// Hooks disagreed on a rewrite; the call must fail with this message.
    pub conflict: Option<String>,
    /// Elicitation / ElicitationResult: the hook's answer to the server.
    pub elicitation: Option<super::ElicitationAnswer>,
    /// The run was stopped before the hooks answered (see
    /// [`super::interrupt`]); a stage that needs an answer fails closed.
    pub interrupted: Option<baton_tool::cancel::CancelReason>,
}

impl HookOutcome {
    /// A PreToolUse verdict that allows the call.
    pub fn allow() -> Self {
        HookOutcome {
            decision: Some(HookDecision::Allow),
            ..Default::default()
        }
    }

    /// A PreToolUse verdict that blocks the call, with the reason for the
    /// model.
    pub fn deny(reason: impl Into<String>) -> Self {
        HookOutcome {
            decision: Some(HookDecision::Deny),
            reason: Some(reason.into()),
            ..Default::default()
        }
    }

    /// A PreToolUse verdict that leaves the call to the host's approver,
    /// with the reason it shows.
    pub fn ask(reason: impl Into<String>) -> Self {
        HookOutcome {
            decision: Some(HookDecision::Ask),
            reason: Some(reason.into()),
            ..Default::default()
        }
    }

    /// An outcome carrying only a non-blocking error.
    pub fn error(message: impl Into<String>) -> Self {
        HookOutcome {
            errors: vec![message.into()],
            ..Default::default()
        }
    }

    /// Folds `other` into `self`: the stronger decision wins and keeps its
    /// reason; lists accumulate; differing rewrites are a conflict.
    pub fn merge(mut self, other: HookOutcome) -> HookOutcome {
        if other.decision > self.decision {
            self.decision = other.decision;
            self.reason = other.reason;
        } else if other.decision == self.decision && other.reason.is_some() {
            self.reason = join(self.reason.take(), other.reason);
        }
        self.updated_input = agree(
            "updatedInput",
            self.updated_input.take(),
            other.updated_input,
            &mut self.conflict,
        );
        self.updated_output = agree(
            "updatedToolOutput",
            self.updated_output.take(),
            other.updated_output,
            &mut self.conflict,
        );
        self.elicitation =
            super::ElicitationAnswer::merge(self.elicitation.take(), other.elicitation);
        self.permission = match (self.permission.take(), other.permission) {
            // A deny from any hook holds.
            (Some(deny @ PermissionAnswer::Deny { .. }), _)
            | (_, Some(deny @ PermissionAnswer::Deny { .. })) => Some(deny),
            (
                Some(PermissionAnswer::Allow {
                    updated_input: a,
                    updated_permissions: mut pa,
                }),
                Some(PermissionAnswer::Allow {
                    updated_input: b,
                    updated_permissions: pb,
                }),
            ) => {
                pa.extend(pb);
                Some(PermissionAnswer::Allow {
                    updated_input: agree("updatedInput", a, b, &mut self.conflict),
                    updated_permissions: pa,
                })
            }
            (a, b) => a.or(b),
        };
        self.additional_context.extend(other.additional_context);
        self.feedback = join(self.feedback.take(), other.feedback);
        self.stop = self.stop.or(other.stop);
        self.errors.extend(other.errors);
        self.system_messages.extend(other.system_messages);
        self.retry |= other.retry;
        self.conflict = self.conflict.or(other.conflict);
        self.interrupted = self.interrupted.or(other.interrupted);
        self
    }
}

fn agree(
    field: &str,
    a: Option<Value>,
    b: Option<Value>,
    conflict: &mut Option<String>,
) -> Option<Value> {
    match (a, b) {
        (Some(a), Some(b)) if a != b => {
            conflict.get_or_insert_with(|| {
                format!("two hooks returned different {field} values for this call; neither was applied")
            });
            None
        }
        (a, b) => a.or(b),
    }
}

pub(crate) fn join(a: Option<String>, b: Option<String>) -> Option<String> {
    match (a, b) {
        (Some(a), Some(b)) => Some(format!("{a}\n{b}")),
        (a, b) => a.or(b),
    }
}
