//! The behaviour a tool author writes.
//!
//! Every method except `call` has a default, and every default is the
//! cautious one (SPEC §2): a tool that says nothing runs alone, is treated as
//! a writer, and keeps running when the user types a new message. Forgetting a
//! declaration can cost speed, never safety.

use async_trait::async_trait;

use crate::context::ToolContext;
use crate::output::{ToolError, ToolOutput};
use crate::permission::{PermissionTarget, ToolPermission};

/// A tool's behaviour over its input type `I` (a typed struct, or
/// `serde_json::Value` for raw tools).
#[async_trait]
pub trait ToolLogic<I: Send + Sync + 'static>: Send + Sync + 'static {
    /// Whether the tool is available in this environment.
    fn is_enabled(&self) -> bool {
        true
    }

    /// May this call run beside other safe calls? Decided once, at add time.
    fn is_concurrency_safe(&self, _input: &I) -> bool {
        false
    }

    /// Does this call have no side effects?
    fn is_read_only(&self, _input: &I) -> bool {
        false
    }

    /// Is this call irreversible?
    fn is_destructive(&self, _input: &I) -> bool {
        false
    }

    /// Does this call reach the network or the outside world?
    fn is_open_world(&self, _input: &I) -> bool {
        false
    }

    /// What the permission rules look at for this call (command, path, URL).
    fn permission_target(&self, _input: &I, _ctx: &ToolContext) -> PermissionTarget {
        PermissionTarget::None
    }

    /// The context the permission rules judge this tool's calls in, when
    /// it is not the session's: a tool that runs on another machine (a
    /// remote worker) has its paths judged against that machine's
    /// workspace. `None` (the default): the session's context.
    fn permission_context(
        &self,
        _context: &crate::context::Context,
    ) -> Option<crate::context::Context> {
        None
    }

    /// Further targets the rules judge besides [`Self::permission_target`]
    /// (a patch edits each path it names); the strictest decision stands.
    fn further_permission_targets(&self, _input: &I, _ctx: &ToolContext) -> Vec<PermissionTarget> {
        Vec::new()
    }

    /// Short label used when this call is named in another call's result,
    /// e.g. `Bash(make -j8…)`. Defaults to the tool name.
    fn label(&self, _input: &I) -> Option<String> {
        None
    }

    /// Tool-specific checks after the schema passed. `Err` is shown to the
    /// model as a validation error.
    async fn validate_input(&self, _input: &I, _ctx: &ToolContext) -> Result<(), String> {
        Ok(())
    }

    /// The tool's own permission view; by default it defers to the rules.
    async fn check_permissions(&self, _input: &I, _ctx: &ToolContext) -> ToolPermission {
        ToolPermission::Defer
    }

    /// Does the work. Should return promptly once `ctx.cancel` fires.
    async fn call(&self, input: I, ctx: ToolContext) -> Result<ToolOutput, ToolError>;
}
