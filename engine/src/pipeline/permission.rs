//! The permission stage: rules, the tool's own view and hook verdicts
//! combined, then the approver for anything that still asks.
//!
//! Precedence (SPEC §4.6, §11): any deny wins; an ask *rule* cannot be
//! overridden by a hook's allow; a hook's allow can waive the mode's default
//! ask; with no approver, ask means deny; in dontAsk mode every ask (a
//! tool's or a hook's too, not only the policy's) is a deny.

use super::permission_hooks::{self, Answered};
use super::{messages, ApproverService, CallState, Early, Flow, Pipeline};
use crate::confine::{Approval, Confinement, FloorState, WAIVE_VAR};
use crate::hooks::permission_updates::SessionPermissions;
use crate::hooks::HookDecision;
use crate::permission::{
    ApprovalRequest, AskSource, PermissionDecision, PermissionMode, PermissionRequest,
    PermissionTarget, ToolPermission,
};
use baton_tool::call::{CallResult, Outcome};
use baton_tool::tool::{ParsedInput, Tool};
use serde_json::Value;

/// What the configured rules and the session's own rules decide for the
/// call as it now is, and the permission mode that applies. Approvals that
/// were remembered and PermissionRequest hooks may have changed the
/// session's mode, directories and rules: they are judged in that context.
/// A deny of the configured rules wins; otherwise a matching session rule;
/// otherwise the configured rules' decision.
pub(super) fn rules_decision(
    pipeline: &Pipeline,
    state: &CallState,
    tool: &Tool,
    parsed: &ParsedInput,
    target: &PermissionTarget,
) -> (PermissionDecision, PermissionMode) {
    rules_decision_as(pipeline, state, tool, parsed, target, state.read_only)
}

/// [`rules_decision`] as if the call had been judged `read_only`.
fn rules_decision_as(
    pipeline: &Pipeline,
    state: &CallState,
    tool: &Tool,
    parsed: &ParsedInput,
    target: &PermissionTarget,
    read_only: bool,
) -> (PermissionDecision, PermissionMode) {
    let session = SessionPermissions::of(&state.ctx.session);
    let changed = (!session.is_empty()).then(|| session.context(&state.ctx.context));
    let context = changed.as_ref().unwrap_or(&state.ctx.context);
    // A remote tool's paths are judged against the worker's workspace.
    let own = tool.permission_context(context);
    let context = own.as_ref().unwrap_or(context);
    let request = PermissionRequest {
        tool,
        input: parsed.raw(),
        target,
        read_only,
        context,
        caller: state.call.caller.as_ref(),
    };
    let decision = match (pipeline.policy.decide(&request), session.decide(&request)) {
        (deny @ PermissionDecision::Deny { .. }, _) => deny,
        (_, Some(session)) => session,
        (policy, None) => policy,
    };
    (decision, context.permission_mode)
}

/// Applies permission updates (Claude Code's `PermissionUpdate` objects) to
/// the session; returns what could not be applied. Relative paths and
/// project settings resolve against the first root (or the working
/// directory).
pub(super) fn update_session(state: &CallState, updates: &[Value]) -> Vec<String> {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let project = state
        .ctx
        .context
        .roots
        .first()
        .cloned()
        .unwrap_or_else(|| state.ctx.cwd().to_path_buf());
    SessionPermissions::of(&state.ctx.session).apply(updates, home.as_deref(), &project)
}

/// What the rules, the tool and the hooks make of a call, before anyone is
/// asked.
pub(super) enum Verdict {
    Allow,
    Ask {
        reason: String,
        suggestion: Option<String>,
    },
    Deny(String),
}

pub(super) async fn decide(pipeline: &Pipeline, state: &mut CallState, tool: &Tool) -> Flow {
    let Some(parsed) = state.parsed.as_ref() else {
        return Err(deny(
            state,
            messages::internal("no parsed input at permission time"),
        ));
    };
    let target = tool.permission_target(parsed, &state.ctx);
    let (verdict, target) = verdict(pipeline, state, tool, target).await?;
    // A denial and a question are boxed: inline, their hooks, the
    // approver's future and the answer's checks would grow every call's
    // future (which is moved whole, into its box and maybe a task), though
    // most calls are simply allowed.
    // Each box is bound by its own statement before it is awaited: a
    // temporary lives to the end of its statement, so one made in the
    // awaiting expression itself would keep its full size in this future.
    match verdict {
        Verdict::Allow => Ok(()),
        Verdict::Deny(reason) => {
            let refusal = Box::pin(refuse(pipeline, state, tool, reason));
            refusal.await
        }
        Verdict::Ask { reason, suggestion } => {
            let question = Box::pin(ask(pipeline, state, tool, target, reason, suggestion));
            question.await
        }
    }
}

/// The verdict on the call as it now is (rules, the tool's own view, the
/// hooks' decision, the mode) when it touches `target`, given back with
/// it; nobody is asked and nothing is run. Also what [`Pipeline::judge`]
/// answers.
pub(super) async fn verdict(
    pipeline: &Pipeline,
    state: &mut CallState,
    tool: &Tool,
    target: PermissionTarget,
) -> Flow<(Verdict, PermissionTarget)> {
    let Some(parsed) = state.parsed.as_ref() else {
        return Err(deny(
            state,
            messages::internal("no parsed input at permission time"),
        ));
    };
    let (policy, mode) = rules_decision(pipeline, state, tool, parsed, &target);
    // A call touching several paths (a patch) is judged on each of them.
    let policy = tool
        .further_permission_targets(parsed, &state.ctx)
        .iter()
        .fold(policy, |acc, more| {
            strictest(acc, rules_decision(pipeline, state, tool, parsed, more).0)
        });
    let own = tool.check_permissions(parsed, &state.ctx).await;
    let hook = &state.hook_verdict;
    // Allowed by nothing but the read-only judgement of a command: its
    // commands then run under the kernel's read-only floor.
    let judged = state.read_only
        && matches!(target, PermissionTarget::Command(_))
        && matches!(policy, PermissionDecision::Allow)
        && !matches!(own, ToolPermission::Allow)
        && hook.decision != Some(HookDecision::Allow)
        && !matches!(
            rules_decision_as(pipeline, state, tool, parsed, &target, false).0,
            PermissionDecision::Allow
        );
    state.ctx.approval = if judged {
        Approval::ReadOnlyJudgement
    } else {
        Approval::Vouched
    };
    // autoAllowBashIfSandboxed: the sandbox vouches for a command that
    // only the mode's default would have asked about (rules that ask,
    // protected paths and hooks still have their say).
    let confinement = Confinement::of(&state.ctx.services);
    let policy = match policy {
        PermissionDecision::Ask {
            source: AskSource::ModeDefault,
            ..
        } if confinement.auto_allows(tool.def().kind(), parsed.raw()) => PermissionDecision::Allow,
        other => other,
    };

    let verdict = match (policy, own, hook.decision) {
        (PermissionDecision::Deny { reason }, _, _) => Verdict::Deny(reason),
        (_, ToolPermission::Deny(reason), _) => Verdict::Deny(reason),
        (
            PermissionDecision::Ask {
                reason,
                source: AskSource::Rule,
                suggestion,
            },
            _,
            _,
        ) => Verdict::Ask { reason, suggestion },
        (_, ToolPermission::Ask(reason), _) => Verdict::Ask {
            reason,
            suggestion: None,
        },
        (_, _, Some(HookDecision::Ask)) => Verdict::Ask {
            reason: hook
                .reason
                .clone()
                .unwrap_or_else(|| "a PreToolUse hook asked for confirmation".into()),
            suggestion: None,
        },
        (_, _, Some(HookDecision::Allow)) => Verdict::Allow,
        (_, ToolPermission::Allow, _) | (PermissionDecision::Allow, _, _) => Verdict::Allow,
        (
            PermissionDecision::Ask {
                reason, suggestion, ..
            },
            _,
            _,
        ) => Verdict::Ask { reason, suggestion },
    };

    // Without the floor, the judgement alone does not let a command run.
    let verdict = match (verdict, confinement.floor()) {
        (Verdict::Allow, FloorState::Unavailable(why)) if judged => Verdict::Ask {
            reason: format!(
                "the command looks read-only, but the OS sandbox that confines such commands is unavailable ({why}); set {WAIVE_VAR}=1 to let read-only commands run without it"
            ),
            suggestion: None,
        },
        (verdict, _) => verdict,
    };

    let verdict = match verdict {
        Verdict::Ask { reason, .. } if mode == PermissionMode::DontAsk => Verdict::Deny(format!(
            "{reason}; that needs approval, and in dontAsk mode anything that would ask is denied"
        )),
        other => other,
    };
    Ok((verdict, target))
}

/// The call is denied: PermissionDenied hooks may add a retry hint.
async fn refuse(pipeline: &Pipeline, state: &mut CallState, tool: &Tool, reason: String) -> Flow {
    let mut text = messages::denied(tool.name(), &reason);
    if let Some(retry) = permission_hooks::permission_denied(pipeline, state, tool, &reason).await {
        text.push_str("\n\n");
        text.push_str(&retry);
    }
    Err(deny(state, text))
}

/// The call needs an answer: PermissionRequest hooks first, then the
/// approver, if there is one.
async fn ask(
    pipeline: &Pipeline,
    state: &mut CallState,
    tool: &Tool,
    target: PermissionTarget,
    reason: String,
    suggestion: Option<String>,
) -> Flow {
    // Whoever answers yes vouches for the call.
    state.ctx.approval = Approval::Vouched;
    if let Answered::Allowed =
        permission_hooks::permission_request(pipeline, state, tool, &reason, suggestion.as_deref())
            .await?
    {
        return Ok(());
    }
    let Some(parsed) = state.parsed.as_ref() else {
        return Err(deny(
            state,
            messages::internal("no parsed input at approval time"),
        ));
    };
    let approver = state
        .ctx
        .services
        .get::<ApproverService>()
        .map(|s| s.0.clone())
        .or_else(|| pipeline.approver.clone());
    let Some(approver) = approver else {
        return Err(deny(
            state,
            messages::needs_approval(tool.name(), &reason, suggestion.as_deref()),
        ));
    };
    let label = tool.label(parsed);
    let summary = crate::permission::summary::request_summary(
        tool.name(),
        &target,
        (label != tool.name()).then_some(label.as_str()),
        parsed.raw(),
    );
    let asking = approver.approve(ApprovalRequest {
        call_id: state.call.id.clone(),
        tool_name: tool.name().to_string(),
        input: parsed.raw().clone(),
        reason,
        suggestion: suggestion.clone(),
        caller: state.call.caller.clone(),
        agent_chain: crate::agent_chain::AgentChain::of(&state.ctx.context).call_ids(),
        parent_call_id: None,
        summary,
    });
    // An unanswered question must not outlive an interrupt; an
    // answer that is there wins (deny-and-interrupt cancels the
    // batch right after answering).
    let answer = tokio::select! {
        biased;
        answer = asking => answer,
        _ = state.ctx.cancel.cancelled() => {
            let reason = state.ctx.cancel.reason().unwrap_or(baton_tool::cancel::CancelReason::User);
            return Err(Early::new(CallResult::error(
                &state.call,
                messages::cancelled(&reason, false),
                Outcome::Cancelled { started: false },
            )));
        }
    };
    super::approval::apply(pipeline, state, tool, answer, suggestion.as_deref()).await
}

fn deny(state: &CallState, text: String) -> Early {
    Early::new(CallResult::error(&state.call, text, Outcome::Denied))
}

/// Deny over ask over allow; between two of a kind, the first.
fn strictest(a: PermissionDecision, b: PermissionDecision) -> PermissionDecision {
    let rank = |d: &PermissionDecision| match d {
        PermissionDecision::Allow => 0,
        PermissionDecision::Ask { .. } => 1,
        PermissionDecision::Deny { .. } => 2,
    };
    if rank(&b) > rank(&a) {
        b
    } else {
        a
    }
}
