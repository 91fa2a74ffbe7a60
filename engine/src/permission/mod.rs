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
//! Code's precedence and mode defaults, and [`settings`] loads and merges
//! the settings files that hold the rules.

mod bash;
mod git_config;
mod legacy;
mod mcp;
mod paths;
pub mod policy;
mod protected;
mod reach;
mod reads;
pub mod rules;
pub mod sandbox_settings;
pub mod settings;
pub mod summary;
mod web;

pub use policy::RulePolicy;
pub use rules::{Rule, RuleError, RuleKind};
pub use sandbox_settings::{SandboxConfig, SandboxSettings};
pub use settings::{Settings, SettingsError};

pub use baton_tool::permission::{
    AllowAllUnsafe, Approval, ApprovalRequest, Approver, AskSource, FileAccess, PermissionDecision,
    PermissionMode, PermissionPolicy, PermissionRequest, PermissionTarget, SearchFilter,
    ToolPermission, Unasked,
};
