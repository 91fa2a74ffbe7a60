//! The permission stage's contract.
//!
//! The pipeline asks a [`PermissionPolicy`] for a decision and, when the answer
//! is "ask", an [`Approver`] (the host). The Claude Code-compatible rule engine
//! is one policy, and with no rules at all it is the secure default (SPEC
//! §11: read-only inside the workspace runs, anything else asks).
//! [`AllowAllUnsafe`] exists for tests and benchmarks and says so. Tools describe *what* a call touches through
//! [`PermissionTarget`], so rules can be matched without the policy knowing
//! any concrete tool.
//!
//! The rule engine lives in the submodules: [`rules`] parses rule strings,
//! one matcher module per kind of target (`bash`, `paths`, `web`, `mcp`)
//! decides whether a parsed rule covers a call, [`policy`] applies Claude
//! Code's precedence and mode defaults. The settings files that hold the
//! rules are loaded and merged by [`crate::settings`].

pub(crate) mod bash;
mod git_config;
pub(crate) mod legacy;
mod mcp;
pub(crate) mod paths;
pub mod policy;
pub(crate) mod protected;
mod reach;
mod reads;
pub mod rules;
pub mod summary;
pub(crate) mod web;

pub use policy::RulePolicy;
pub use rules::{Rule, RuleError, RuleKind};

pub use baton_tool::permission::{
    AllowAllUnsafe, Approval, ApprovalRequest, Approver, AskSource, FileAccess, PermissionDecision,
    PermissionMode, PermissionPolicy, PermissionRequest, PermissionTarget, SearchFilter,
    ToolPermission, Unasked,
};
