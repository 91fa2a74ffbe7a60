//! Baton's engine: the tool contract, the tool pool and the per-call pipeline.
//!
//! This crate knows no concrete tool and no scheduling: it defines what a
//! tool is ([`tool`]), which tools are offered ([`pool`]), and what happens
//! to one call from lookup to result ([`pipeline`]), with permission and
//! hooks as pluggable stages ([`permission`], [`hooks`]). The actor runtime
//! decides when calls run; the tools crate provides the built-ins.

pub mod aliases;
pub mod call;
pub mod call_details;
pub mod cancel;
pub mod confine;
pub mod metrics;
pub mod shell_details;
/// The kernel confinement layer (its own crate, usable alone).
pub use baton_sandbox as sandbox;
pub mod content;
pub mod context;
pub mod deferred;
pub mod env;
pub mod extensions;
pub mod hooks;
pub mod nesting;
pub mod output;
pub mod paths;
pub mod permission;
pub mod pipeline;
pub mod plan_mode;
pub mod pool;
pub mod process;
pub mod questions;
pub mod schema;
pub mod session;
/// Bash command lines, understood (the `baton-shell` crate).
pub use baton_shell as shell;
pub mod subagent;
pub mod subagent_inbox;
pub mod tool;
pub mod vars;
pub mod wire;

pub use call::{CallResult, Outcome, ToolUse};
pub use cancel::{CancelReason, CancelScope};
pub use content::ContentBlock;
pub use context::{Context, ContextModifier, ToolContext};
pub use hooks::{
    CommandHook, FnHook, Hook, HookDecision, HookEvent, HookInput, HookOutcome, HookRegistry,
    ModelHookRunner, ModelHookSlot, PermissionAnswer,
};
pub use output::{ToolError, ToolOutput};
pub use permission::{
    AllowAllUnsafe, Approval, ApprovalRequest, Approver, PermissionDecision, PermissionMode,
    PermissionPolicy, PermissionTarget, RulePolicy, Settings, SettingsError, ToolPermission,
    Unasked,
};
pub use pipeline::{Pipeline, PreparedCall};
pub use pool::{PoolSpec, ToolPool};
pub use progress::{Progress, ProgressSink, TaggedEmit};
pub use session::{Notification, Session};
pub use tool::{InterruptBehavior, Tool, ToolDef, ToolLogic, ToolOrigin, WorkKind};

pub mod progress;

/// Re-exported so tool crates derive schemas with the same version.
pub use async_trait::async_trait;
pub use schemars;
