//! The PreToolUse/PostToolUse/PermissionRequest/PermissionDenied hook
//! runs of one call, one per view
//! (`hooks::presented`): a shell tool of another set shown as `Bash`, a
//! patch shown as an `Edit` of each path it names, as the tool's kind says. The outcomes are merged as the
//! outcomes of several hooks are, except that a hook's "allow" stands only
//! if it allowed every view (and a PermissionRequest grant only if every
//! view was granted): allowing one path of a patch does not allow the
//! others.

use serde_json::Value;

use super::{CallState, Pipeline};
use crate::hooks::presented::{unpresent, views, View, REAL_NAME_FIELD};
use crate::hooks::{HookDecision, HookEvent, HookInput, HookOutcome, PermissionAnswer};
use crate::permission::PermissionTarget;
use baton_tool::tool::Tool;

/// Runs `event`'s hooks for each view of the call; `input` is the call's
/// input as hooks should see it, `prepare` finishes each view's hook input
/// (a PostToolUse's response). A rewritten input comes back in the tool's
/// own shape; `Err` when it cannot be carried back.
pub(super) async fn run(
    pipeline: &Pipeline,
    state: &CallState,
    tool: &Tool,
    event: HookEvent,
    input: &Value,
    prepare: impl Fn(&mut HookInput),
) -> Result<HookOutcome, String> {
    let base = state.hook_input(event);
    let kind = tool.def().kind();
    let shown = views(tool.name(), kind, input, || {
        written_paths(state, tool, input)
    });
    let several = shown.len() > 1;
    let mut merged = HookOutcome::default();
    let mut every_view_allowed = true;
    let mut every_view_granted = true;
    for view in &shown {
        let mut hook_input = present(&base, tool.name(), view);
        prepare(&mut hook_input);
        let mut outcome = super::pre_hooks::run_for_call(pipeline, state, tool, &hook_input).await;
        every_view_allowed &= outcome.decision == Some(HookDecision::Allow);
        if let Some(updated) = outcome.updated_input.take() {
            outcome.updated_input = Some(unpresent(tool.name(), kind, view, updated)?);
        }
        // A PermissionRequest hook's answer, likewise.
        match &mut outcome.permission {
            Some(PermissionAnswer::Allow { updated_input, .. }) => {
                if let Some(updated) = updated_input.take() {
                    *updated_input = Some(unpresent(tool.name(), kind, view, updated)?);
                }
            }
            _ => every_view_granted = false,
        }
        merged = merged.merge(outcome);
    }
    if several && merged.decision == Some(HookDecision::Allow) && !every_view_allowed {
        merged.decision = None;
        merged.reason = None;
    }
    // Granting one path of a patch is no answer for the others; a deny
    // from any view stands (the merge keeps it).
    if several
        && !every_view_granted
        && matches!(merged.permission, Some(PermissionAnswer::Allow { .. }))
    {
        merged.permission = None;
    }
    Ok(merged)
}

fn present(base: &HookInput, real: &str, view: &View) -> HookInput {
    let mut input = base.clone();
    if view.tool_name != real {
        input
            .extra
            .insert(REAL_NAME_FIELD.into(), Value::String(real.to_string()));
    }
    input.tool_name = view.tool_name.clone();
    input.tool_input = view.tool_input.clone();
    input
}

/// The absolute paths the call writes, as the permission stage judges
/// them (its target and further targets).
fn written_paths(state: &CallState, tool: &Tool, input: &Value) -> Vec<String> {
    let reparsed;
    let parsed = match state.parsed.as_ref() {
        Some(p) => p,
        None => match tool.parse(input) {
            Ok(p) => {
                reparsed = p;
                &reparsed
            }
            Err(_) => return Vec::new(),
        },
    };
    let mut targets = vec![tool.permission_target(parsed, &state.ctx)];
    targets.extend(tool.further_permission_targets(parsed, &state.ctx));
    let mut paths = Vec::new();
    for target in targets {
        if let PermissionTarget::Path { path, .. } = target {
            let path = path.display().to_string();
            if !paths.contains(&path) {
                paths.push(path);
            }
        }
    }
    paths
}
