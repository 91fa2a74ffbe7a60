//! The tool contract: what a tool is, what a call gives it and what it
//! gives back.
//!
//! A crate that provides tools depends on this one alone: a tool is a
//! [`ToolDef`] (name, schema, description, how it may run) and a
//! [`ToolLogic`] (its checks and its work), turned into a [`Tool`] by
//! [`Tool::new`]. A call sees a [`ToolContext`] (working directory,
//! session, cancellation, progress, services) and answers with a
//! [`ToolOutput`] or a [`ToolError`]. What a call touches is described by a
//! [`PermissionTarget`], so a policy can judge it without knowing the tool.
//!
//! Nothing here runs a call: the engine crate (pipeline, permission rules,
//! hooks, settings) and the actor runtime (scheduling, ordering) do. This
//! crate is kept free of networking, processes, the shell parser and the
//! sandbox, so a third-party tool compiles against it quickly.
//!
//! The enums every stage must answer in full ([`Outcome`],
//! [`CancelReason`], [`PermissionTarget`], [`ToolPermission`],
//! [`PermissionDecision`], [`Approval`], [`Unasked`]) are exhaustive on
//! purpose: the engine, the runtime and the wire formats match them without
//! a catch-all, so a new variant is a compile error wherever it needs an
//! answer, never a silent default. A new variant is a breaking change of
//! this crate.

pub mod aliases;
pub mod call;
pub mod call_details;
pub mod cancel;
pub mod cleanup;
pub mod confine;
pub mod content;
pub mod context;
mod debug;
pub mod extensions;
pub mod output;
pub mod paths;
pub mod permission;
pub mod pool;
pub mod progress;
pub mod schema;
pub mod session;
pub mod shell_details;
pub mod tool;

pub use call::{CallResult, Outcome, ToolUse};
pub use cancel::{CancelReason, CancelScope};
pub use content::ContentBlock;
pub use context::{Context, ContextModifier, ToolContext};
pub use output::{ToolError, ToolOutput};
pub use permission::{
    AllowAllUnsafe, Approval, ApprovalRequest, Approver, PermissionDecision, PermissionMode,
    PermissionPolicy, PermissionTarget, ToolPermission, Unasked,
};
pub use pool::{PoolSpec, ToolPool};
pub use progress::{Progress, ProgressSink, TaggedEmit};
pub use session::{Notification, Session};
pub use tool::{InterruptBehavior, Tool, ToolDef, ToolKind, ToolLogic, ToolOrigin, WorkKind};

/// Re-exported so tool crates derive schemas and implement [`ToolLogic`]
/// with the same versions as Baton.
pub use async_trait::async_trait;
pub use schemars;
