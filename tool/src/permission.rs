//! The permission contract between tools, policies and hosts: what a call
//! touches ([`PermissionTarget`]), a tool's own view ([`ToolPermission`]),
//! the policy trait the pipeline asks ([`PermissionPolicy`]), and the
//! question and answer exchanged with a host ([`ApprovalRequest`],
//! [`Approval`]). Claude Code's rule engine implements the policy in the
//! engine crate; nothing here knows a rule.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::context::{Context, ToolContext};
use crate::tool::Tool;

/// Permission modes, named as in Claude Code settings (SPEC §11).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum PermissionMode {
    /// Rules decide; what no rule covers is allowed if it only reads inside
    /// the workspace, and asked otherwise.
    #[default]
    Default,
    /// Like `Default`, and file writes inside the workspace are allowed too.
    AcceptEdits,
    /// Only read-only calls run, while the model explores and plans.
    Plan,
    /// What would be asked is denied instead (nobody is there to ask).
    DontAsk,
    /// Every call runs that no deny rule stops; nothing is asked.
    BypassPermissions,
}

impl PermissionMode {
    /// Every mode, in the order Claude Code lists them.
    pub const ALL: [PermissionMode; 5] = [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::Plan,
        PermissionMode::DontAsk,
        PermissionMode::BypassPermissions,
    ];

    /// The mode's name in settings, flags and hook input (`acceptEdits`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            PermissionMode::Default => "default",
            PermissionMode::AcceptEdits => "acceptEdits",
            PermissionMode::Plan => "plan",
            PermissionMode::DontAsk => "dontAsk",
            PermissionMode::BypassPermissions => "bypassPermissions",
        }
    }
}

impl fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for PermissionMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PermissionMode::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown permission mode `{s}` (expected one of: default, acceptEdits, plan, dontAsk, bypassPermissions)"
                )
            })
    }
}

/// Whether a file tool reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FileAccess {
    /// The tool reads the path (`Read(...)` rules).
    Read,
    /// The tool creates, changes or removes the path (`Edit(...)` rules).
    Write,
}

/// What a call touches, as far as permission rules care.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PermissionTarget {
    /// Rules match on the tool name only.
    None,
    /// A shell command (Bash rules).
    Command(String),
    /// A file or directory, absolute (file tool rules). Writes are matched
    /// by `Edit(...)` rules whatever the tool.
    Path {
        /// The path, absolute.
        path: PathBuf,
        /// Whether the call reads or writes it.
        access: FileAccess,
    },
    /// A URL (WebFetch domain rules).
    Url(String),
}

/// A tool's own view of a call's permission (SPEC §2 `check_permissions`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolPermission {
    /// No opinion; the rules decide.
    Defer,
    /// The call may run without asking (unless a deny rule says otherwise).
    Allow,
    /// The call needs approval; the text says why.
    Ask(String),
    /// The call must not run; the text says why.
    Deny(String),
}

/// Everything a policy may look at.
#[derive(Debug)]
pub struct PermissionRequest<'a> {
    /// The tool called.
    pub tool: &'a Tool,
    /// The call's input, as the model sent it (or a hook rewrote it).
    pub input: &'a Value,
    /// What the call touches, as the tool reported it.
    pub target: &'a PermissionTarget,
    /// Whether the tool judged this call read-only.
    pub read_only: bool,
    /// The batch's context: working directory, roots, mode, session rules.
    pub context: &'a Context,
    /// Who made the call when it was not the model directly (see
    /// [`crate::ToolUse::caller`]); a policy may treat such calls apart.
    pub caller: Option<&'a Value>,
}

/// Where an "ask" came from: hooks may not override a rule's ask (SPEC §4.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AskSource {
    /// An explicit ask rule matched.
    Rule,
    /// No rule matched and the mode's default is to ask.
    ModeDefault,
}

/// A policy's verdict on one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PermissionDecision {
    /// The call runs.
    Allow,
    /// The call needs approval from the host or user.
    Ask {
        /// Why approval is needed (shown to the user, and to the model if denied).
        reason: String,
        /// Whether a rule or the mode's default asked.
        source: AskSource,
        /// A rule the user could add to allow calls like this one.
        suggestion: Option<String>,
    },
    /// The call must not run.
    Deny {
        /// Why (for the model and the user).
        reason: String,
    },
}

/// Decides whether a call may run.
pub trait PermissionPolicy: Send + Sync {
    /// The verdict on `request`.
    fn decide(&self, request: &PermissionRequest<'_>) -> PermissionDecision;

    /// A rule that removes the whole tool from the pool (SPEC §3 step 1).
    fn denies_whole_tool(&self, _tool_name: &str) -> bool {
        false
    }

    /// Why bypassPermissions mode is unavailable (`None`: it is available).
    /// An engine refuses to be built in that mode when this says so.
    fn bypass_disabled(&self) -> Option<String> {
        None
    }

    /// Whether a search tool (Grep, Glob) must leave `path` out of what it
    /// reports: a read rule (deny or ask) names it. The call as a whole was
    /// judged on its search root; this is asked for every file the search
    /// visits, so a rule on a file holds however the search reaches it.
    fn hides_from_search(&self, _tool_name: &str, _path: &Path, _context: &Context) -> bool {
        false
    }
}

/// Allows every call, whatever it does, wherever: no rules, no workspace, no
/// questions. For tests and benchmarks; a host that uses it hands the model
/// the machine.
#[derive(Clone, Copy, Debug, Default)]
pub struct AllowAllUnsafe;

impl PermissionPolicy for AllowAllUnsafe {
    fn decide(&self, _request: &PermissionRequest<'_>) -> PermissionDecision {
        PermissionDecision::Allow
    }
}

/// A question to the host (or user) about one call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRequest {
    /// The `tool_use` id of the call.
    pub call_id: String,
    /// The tool called.
    pub tool_name: String,
    /// The call's input.
    pub input: Value,
    /// Why the call needs approval.
    pub reason: String,
    /// A rule that would allow calls like this one, for "always allow".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<String>,
    /// Who made the call when it was not the model directly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caller: Option<Value>,
    /// Ids of the `Agent` calls the asking call runs under, outermost
    /// first; empty for the main agent (SPEC §15).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agent_chain: Vec<String>,
    /// The call that opened the nested batch the asking call belongs to
    /// (an `Agent` call, or any tool running calls of its own); `None` for
    /// calls of a top-level message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_call_id: Option<String>,
    /// One line for a terminal prompt, e.g. `Bash(rm -rf build)`: the
    /// command, path or URL the rules judge, shortened, with control
    /// characters escaped (see the engine's `permission::summary`).
    #[serde(default)]
    pub summary: String,
}

/// The host's (or user's) answer to an [`ApprovalRequest`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Approval {
    /// Run the call.
    Allow,
    /// Do not run the call.
    Deny {
        /// Why, for the model (default: the user declined).
        #[serde(default)]
        reason: Option<String>,
    },
    /// Allow with changes. `updated_input` replaces the model's input; it
    /// is held to everything the model's input was (schema, the tool's own
    /// checks, PreToolUse hooks, deny rules), since a host may pass model
    /// text through. `remember` adds the request's `suggestion` as an allow
    /// rule for the rest of the session, so later calls like this one do
    /// not ask.
    AllowWith {
        /// Replaces the model's input when given.
        #[serde(default)]
        updated_input: Option<Value>,
        /// Remember the request's `suggestion` as a session allow rule.
        #[serde(default)]
        remember: bool,
    },
    /// Allow, and switch the session to `mode` (Claude Code's `setMode`
    /// permission update). Approving `ExitPlanMode` this way picks the mode
    /// the session leaves plan mode for.
    AllowAndSetMode {
        /// The mode the session switches to.
        mode: PermissionMode,
    },
    /// Deny, and interrupt the whole batch as a `cancel` interrupt would
    /// (the user wants to stop the turn, not just this call).
    DenyAndInterrupt {
        /// Why, for the model.
        #[serde(default)]
        reason: Option<String>,
    },
    /// Nobody answered, and no person decided: the model is told why (see
    /// [`Unasked`]) instead of "the user declined".
    Unanswered {
        /// Why there was no answer.
        cause: Unasked,
        /// Extra words for the model (which client, what failed).
        #[serde(default)]
        detail: Option<String>,
    },
}

/// Why a question that needed a person got no answer. Each cause tells the
/// model something different to do next.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unasked {
    /// The session runs without anyone to ask (no approver, a batch run).
    Headless,
    /// The client running the session cannot put questions to its user
    /// (an MCP client without elicitation).
    ClientCannotAsk,
    /// The session is closing: the host stopped reading or went away.
    SessionClosing,
}

impl Approval {
    /// Whether the call may run.
    pub fn allows(&self) -> bool {
        matches!(
            self,
            Approval::Allow | Approval::AllowWith { .. } | Approval::AllowAndSetMode { .. }
        )
    }
}

/// Answers "ask" decisions. Without one, ask means deny.
#[async_trait]
pub trait Approver: Send + Sync {
    /// Answers `request`; an approver that cannot ask returns
    /// [`Approval::Unanswered`].
    async fn approve(&self, request: ApprovalRequest) -> Approval;
}

/// What a search tool consults, per file visited, to honour read rules
/// (see [`PermissionPolicy::hides_from_search`]). The pipeline offers it to
/// every call through [`ToolContext::services`]; without it (a tool run
/// outside the pipeline) nothing is hidden.
#[derive(Clone)]
pub struct SearchFilter {
    policy: std::sync::Arc<dyn PermissionPolicy>,
}

impl SearchFilter {
    /// A filter asking `policy`.
    pub fn new(policy: std::sync::Arc<dyn PermissionPolicy>) -> Self {
        SearchFilter { policy }
    }

    /// Whether the search `ctx`'s call (by `tool_name`) makes must leave
    /// `path` (absolute) out. `false` when no filter was offered.
    pub fn hides(ctx: &ToolContext, tool_name: &str, path: &Path) -> bool {
        ctx.services
            .get::<SearchFilter>()
            .is_some_and(|f| f.policy.hides_from_search(tool_name, path, &ctx.context))
    }
}

impl fmt::Debug for SearchFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SearchFilter(..)")
    }
}
