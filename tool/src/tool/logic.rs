//! The behaviour a tool author writes.
//!
//! Every method except `call` has a default, and every default is the
//! cautious one (SPEC §2): a tool that says nothing runs alone, is treated as
//! a writer, and keeps running when the user types a new message. Forgetting a
//! declaration can cost speed, never safety.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

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
    ///
    /// Override it as an `async fn` in a `#[async_trait]` impl, like
    /// `call`. The default is spelled out as the signature `async_trait`
    /// gives an `async fn` so that it can return a future that is already
    /// done and of zero size: boxing that allocates nothing, where the
    /// macro's default boxed an `async` block on every call of every tool
    /// that keeps it (most tools; see docs/benchmarks.md §1c).
    #[allow(clippy::type_complexity)]
    fn validate_input<'life0, 'life1, 'life2, 'async_trait>(
        &'life0 self,
        _input: &'life1 I,
        _ctx: &'life2 ToolContext,
    ) -> Pin<Box<dyn Future<Output = Result<(), String>> + Send + 'async_trait>>
    where
        'life0: 'async_trait,
        'life1: 'async_trait,
        'life2: 'async_trait,
        Self: 'async_trait,
    {
        Box::pin(Valid)
    }

    /// The tool's own permission view; by default it defers to the rules.
    /// Override it as an `async fn`; the default allocates nothing, as
    /// [`Self::validate_input`]'s.
    #[allow(clippy::type_complexity)]
    fn check_permissions<'life0, 'life1, 'life2, 'async_trait>(
        &'life0 self,
        _input: &'life1 I,
        _ctx: &'life2 ToolContext,
    ) -> Pin<Box<dyn Future<Output = ToolPermission> + Send + 'async_trait>>
    where
        'life0: 'async_trait,
        'life1: 'async_trait,
        'life2: 'async_trait,
        Self: 'async_trait,
    {
        Box::pin(Defers)
    }

    /// Does the work. Should return promptly once `ctx.cancel` fires.
    async fn call(&self, input: I, ctx: ToolContext) -> Result<ToolOutput, ToolError>;
}

/// The default validation's future: the input is valid. Zero-sized, so its
/// box is never allocated.
struct Valid;

impl Future for Valid {
    type Output = Result<(), String>;
    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Self::Output> {
        Poll::Ready(Ok(()))
    }
}

/// The default permission view's future: the tool defers to the rules.
/// Zero-sized, as [`Valid`].
struct Defers;

impl Future for Defers {
    type Output = ToolPermission;
    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Self::Output> {
        Poll::Ready(ToolPermission::Defer)
    }
}

#[cfg(test)]
mod tests {
    /// The defaults' futures must stay zero-sized: a box of anything larger
    /// is an allocation on every call of every tool that keeps them.
    #[test]
    fn the_default_futures_allocate_nothing() {
        assert_eq!(std::mem::size_of::<super::Valid>(), 0);
        assert_eq!(std::mem::size_of::<super::Defers>(), 0);
    }
}
