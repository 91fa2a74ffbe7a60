//! Judging a call without running it.
//!
//! Some requests are not tool calls but must be judged exactly as one: a
//! worker that receives a file over HTTP places it only where a `Write` of
//! that path would be allowed, and sends one only where a `Read` would be.
//! [`Pipeline::judge`] runs the stages before the tool — lookup, schema,
//! `validate_input`, the permission stage's rules, the tool's own view and
//! the mode — and reports the verdict and the target it was judged on. It
//! runs no hook (a PreToolUse hook expects a call the model made, and its
//! answer would be about that call), asks nobody and runs nothing: a
//! verdict of "ask" is the caller's to refuse or to put to someone.
//!
//! A caller that acts on a place of its own may name it: the rules then
//! judge that target instead of the one the tool would report. A file
//! tool reports its path with links followed; a caller that creates an
//! entry by handle at a lexical place (an archive's member, below a
//! directory the tool's own target was judged for) judges that place.

use super::{permission, validate, CallState, Early, Pipeline};
use crate::permission::PermissionTarget;
use baton_tool::call::ToolUse;
use baton_tool::context::ToolContext;

/// What the permission stage makes of a call, before anyone is asked.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Verdict {
    /// The call would run.
    Allow,
    /// The call would need approval; `reason` says which rule or why.
    Ask {
        /// Why approval is needed.
        reason: String,
        /// A rule that would allow calls like this one, if there is one.
        suggestion: Option<String>,
    },
    /// The call would be refused; `reason` says which rule or why.
    Deny {
        /// Why.
        reason: String,
    },
}

/// The verdict on a call and what it was judged on.
#[derive(Clone, Debug)]
pub struct Judgement {
    /// The verdict.
    pub verdict: Verdict,
    /// What the call touches as the tool reported it (for a file tool,
    /// the path with `..` folded and links followed): the object the
    /// verdict is about, and so the one to act on.
    pub target: PermissionTarget,
}

impl Pipeline {
    /// Judges `call` in `ctx` as the stages before its tool would, hooks
    /// left out (see the module's documentation), on the target `on` when
    /// given, else on the one the tool reports. `Err` carries the text
    /// the call's result would have had if it never reached the
    /// permission stage: an unknown tool, an input that fails the schema
    /// or the tool's `validate_input`.
    pub async fn judge(
        &self,
        call: ToolUse,
        ctx: ToolContext,
        on: Option<PermissionTarget>,
    ) -> Result<Judgement, String> {
        let mut prepared = self.prepare(call);
        let tool = prepared.tool.take();
        let parsed = prepared.parsed.take();
        let mut state = CallState::new(prepared.call.clone(), ctx, prepared.read_only);
        let judged = async {
            let tool = validate::lookup(&state, tool)?;
            state.parsed = Some(validate::schema(&state, &tool, parsed, &self.pool)?);
            validate::validate_input(&state, &tool).await?;
            let target = match (on, state.parsed.as_ref()) {
                (Some(target), _) => target,
                (None, Some(parsed)) => tool.permission_target(parsed, &state.ctx),
                (None, None) => PermissionTarget::None,
            };
            permission::verdict(self, &mut state, &tool, target).await
        }
        .await;
        let (verdict, target) = judged.map_err(|Early(result)| result.text())?;
        let verdict = match verdict {
            permission::Verdict::Allow => Verdict::Allow,
            permission::Verdict::Ask { reason, suggestion } => Verdict::Ask { reason, suggestion },
            permission::Verdict::Deny(reason) => Verdict::Deny { reason },
        };
        Ok(Judgement { verdict, target })
    }
}
