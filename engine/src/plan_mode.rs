//! Switching the session's permission mode from inside a batch (plan mode).
//!
//! The mode a call is judged in is the context's, unless a permission
//! update (a PermissionRequest hook's `setMode`, an approval that sets a
//! mode) put one on the session, which then wins. Entering and leaving
//! plan mode goes through the context, as a [`ContextModifier`] of a call
//! that runs alone: the coordinator applies it before any later call of
//! the message starts, so the change holds for exactly the calls after it,
//! in call order. The session's own mode is folded into the context at
//! that point, so there is one place that says what the mode is.

use crate::hooks::permission_updates::SessionPermissions;
use crate::permission::PermissionMode;
use baton_tool::context::{Context, ContextModifier, ToolContext};

/// The mode the session was in when it entered plan mode; leaving plan
/// mode goes back to it unless the host picks another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModeBeforePlan(pub PermissionMode);

/// The mode calls of `ctx` are judged in now.
pub fn effective_mode(ctx: &ToolContext) -> PermissionMode {
    let session = SessionPermissions::of(&ctx.session);
    if session.is_empty() {
        return ctx.context.permission_mode;
    }
    session.context(&ctx.context).permission_mode
}

/// Puts the session in plan mode for the calls after this one. Returns the
/// mode it leaves (to be restored later).
pub fn enter_plan(ctx: &ToolContext) -> (PermissionMode, ContextModifier) {
    let before = effective_mode(ctx);
    // The session-wide mode would outrank the context's; fold it in.
    SessionPermissions::of(&ctx.session).take_mode();
    let modifier = ContextModifier::new(move |context: Context| {
        let mut context = context.with_mode(PermissionMode::Plan);
        context.extensions = context.extensions.with(ModeBeforePlan(before));
        context
    });
    (before, modifier)
}

/// Leaves plan mode for the calls after this one. The mode is the one an
/// approval (or a hook) set on the session while this call was being
/// approved, when it is not plan itself; otherwise the mode before plan;
/// otherwise `default`.
pub fn leave_plan(ctx: &ToolContext) -> (PermissionMode, ContextModifier) {
    let chosen = SessionPermissions::of(&ctx.session)
        .take_mode()
        .filter(|m| *m != PermissionMode::Plan);
    let before = ctx
        .context
        .extensions
        .get::<ModeBeforePlan>()
        .map(|m| m.0)
        .filter(|m| *m != PermissionMode::Plan);
    let mode = chosen.or(before).unwrap_or_default();
    (
        mode,
        ContextModifier::new(move |context: Context| context.with_mode(mode)),
    )
}
