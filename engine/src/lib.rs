//! Baton's engine: the tool contract, the tool pool and the per-call pipeline.
//!
//! This crate knows no concrete tool and no scheduling: it defines what a
//! tool is ([`tool`]), which tools are offered ([`pool`]), and what happens
//! to one call from lookup to result ([`pipeline`]), with permission and
//! hooks as pluggable stages ([`permission`], [`hooks`]). The actor runtime
//! decides when calls run; the tools crate provides the built-ins.

pub mod agent_chain;
pub mod confine;
pub mod metrics;
/// The kernel confinement layer (its own crate, usable alone).
pub use baton_sandbox as sandbox;
pub mod deferred;
pub mod env;
pub mod hooks;
pub mod nesting;
pub mod permission;
pub mod pipeline;
pub mod plan_mode;
/// Process trees: starting commands so all of them can be stopped (the
/// `baton-process` crate).
pub use baton_process as process;
pub mod questions;
pub mod settings;
/// Bash command lines, understood (the `baton-shell` crate).
pub use baton_shell as shell;
pub mod subagent;
pub mod subagent_inbox;
pub mod vars;
/// The model APIs' wire formats (the `baton-wire` crate).
pub use baton_wire as wire;

/// `Debug` for types that cannot derive it (see the macro).
pub use baton_tool::debug_fields;
/// The tool contract (the `baton-tool` crate), under the paths it had
/// when it lived here.
pub use baton_tool::{
    aliases, call, call_details, cancel, cleanup, content, context, extensions, output, paths,
    pool, progress, schema, session, shell_details, tool,
};
pub use baton_tool::{
    CallResult, CancelReason, CancelScope, ContentBlock, Context, ContextModifier,
    InterruptBehavior, Notification, Outcome, PoolSpec, Progress, ProgressSink, Session,
    TaggedEmit, Tool, ToolContext, ToolDef, ToolError, ToolKind, ToolLogic, ToolOrigin, ToolOutput,
    ToolPool, ToolUse, WorkKind,
};
pub use hooks::{
    CommandHook, FnHook, Hook, HookDecision, HookEvent, HookInput, HookOutcome, HookRegistry,
    ModelHookRunner, ModelHookSlot, PermissionAnswer,
};
pub use permission::{
    AllowAllUnsafe, Approval, ApprovalRequest, Approver, PermissionDecision, PermissionMode,
    PermissionPolicy, PermissionTarget, RulePolicy, ToolPermission, Unasked,
};
pub use pipeline::{Pipeline, PreparedCall};
pub use settings::{Settings, SettingsError};

/// Re-exported so tool crates derive schemas with the same version.
pub use async_trait::async_trait;
pub use schemars;
