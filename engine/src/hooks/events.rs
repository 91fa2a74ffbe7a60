//! The events Claude Code defines, and the JSON a hook receives for one.
//!
//! Every event of current Claude Code (the agent SDK's `HOOK_EVENTS`) is
//! named here so that a settings file configuring any of them parses; what
//! Baton does with each is [`HookEvent::support`]. Events that belong to the
//! model loop (a prompt was submitted, the model stopped) are the host's to
//! fire, through `HookRegistry::fire`; events about things Baton has no part
//! in (model switches, worktrees, config edits) are reported once at load.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

macro_rules! events {
    ($($(#[$doc:meta])* $name:ident),* $(,)?) => {
        /// Events a hook can subscribe to, as Claude Code names them.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[non_exhaustive]
        pub enum HookEvent { $($(#[$doc])* $name),* }

        impl HookEvent {
            /// Every event, in the agent SDK's order.
            pub const ALL: &'static [HookEvent] = &[$(HookEvent::$name),*];

            /// The event's name in settings and in `hook_event_name`.
            pub fn as_str(self) -> &'static str {
                match self { $(HookEvent::$name => stringify!($name)),* }
            }
        }
    };
}

events!(
    /// Before a call runs: may allow, deny or ask, or rewrite its input.
    PreToolUse,
    /// After a call succeeded, with its response.
    PostToolUse,
    /// After a call failed, with its error.
    PostToolUseFailure,
    /// After every call of an assistant message has its result.
    PostToolBatch,
    /// The host shows the user a notification.
    Notification,
    /// The user submitted a prompt, before the model sees it.
    UserPromptSubmit,
    /// A slash command is about to expand into a prompt.
    UserPromptExpansion,
    /// A session starts or resumes.
    SessionStart,
    /// A session ends.
    SessionEnd,
    /// The main agent ended its turn.
    Stop,
    /// The turn ended on an error of the model API.
    StopFailure,
    /// A subagent starts.
    SubagentStart,
    /// A subagent ended its turn.
    SubagentStop,
    /// Before the conversation is compacted.
    PreCompact,
    /// After the conversation was compacted.
    PostCompact,
    /// Before the session switches models.
    PreModelSwitch,
    /// After the session switched models.
    PostModelSwitch,
    /// A call needs approval, before anyone is asked.
    PermissionRequest,
    /// A call was denied permission.
    PermissionDenied,
    /// Repository setup or maintenance runs.
    Setup,
    /// A teammate of an agent team is about to go idle.
    TeammateIdle,
    /// A task of the shared task list was created.
    TaskCreated,
    /// A task of the shared task list was completed.
    TaskCompleted,
    /// An MCP server asks the user for input.
    Elicitation,
    /// The user answered an MCP server's question.
    ElicitationResult,
    /// A settings file changed while the session runs.
    ConfigChange,
    /// A git worktree is created for the session or a subagent.
    WorktreeCreate,
    /// Such a worktree is removed.
    WorktreeRemove,
    /// An instructions file (`CLAUDE.md`, rules) was loaded.
    InstructionsLoaded,
    /// The session's working directory changed.
    CwdChanged,
    /// A watched file changed on disk.
    FileChanged,
    /// A directory was added to the workspace.
    DirectoryAdded,
    /// A message is about to be shown to the user.
    MessageDisplay,
);

/// Who fires an event's hooks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EventSupport {
    /// The engine, on its own (tool calls, permission questions, batches).
    Engine,
    /// `baton serve` when its session starts and ends; a library host
    /// fires them itself.
    Session,
    /// The host's model loop, through `HookRegistry::fire` (Baton has no
    /// model loop of its own).
    Host,
    /// Nothing in Baton fires it.
    NotRun,
}

impl HookEvent {
    /// The event called `name` (exact spelling), if Claude Code has one.
    pub fn parse(name: &str) -> Option<HookEvent> {
        HookEvent::ALL.iter().copied().find(|e| e.as_str() == name)
    }

    /// Who fires this event's hooks, if anyone.
    pub fn support(self) -> EventSupport {
        use HookEvent::*;
        match self {
            PreToolUse | PostToolUse | PostToolUseFailure | PostToolBatch | PermissionRequest
            | PermissionDenied | SubagentStart | SubagentStop => EventSupport::Engine,
            SessionStart | SessionEnd => EventSupport::Session,
            // The MCP client, when a server asks for input.
            Elicitation | ElicitationResult => EventSupport::Engine,
            UserPromptSubmit | UserPromptExpansion | Stop | Notification | PreCompact
            | PostCompact | StopFailure | Setup | ConfigChange => EventSupport::Host,
            _ => EventSupport::NotRun,
        }
    }

    /// Whether the event concerns one tool call (its matcher is a tool
    /// name). Other events match their matcher against another field
    /// ([`HookInput::match_query`]).
    pub fn is_tool_event(self) -> bool {
        use HookEvent::*;
        matches!(
            self,
            PreToolUse | PostToolUse | PostToolUseFailure | PermissionRequest | PermissionDenied
        )
    }

    /// The input field a matcher of this event is compared with, as Claude
    /// Code does (`SessionStart` matches `source`, `PreCompact` `trigger`…).
    pub fn match_field(self) -> Option<&'static str> {
        use HookEvent::*;
        match self {
            e if e.is_tool_event() => Some("tool_name"),
            SessionStart => Some("source"),
            SessionEnd => Some("reason"),
            PreCompact | PostCompact => Some("trigger"),
            Notification => Some("notification_type"),
            Setup => Some("trigger"),
            ConfigChange => Some("source"),
            UserPromptExpansion => Some("command_name"),
            SubagentStart | SubagentStop => Some("agent_type"),
            Elicitation | ElicitationResult => Some("mcp_server_name"),
            _ => None,
        }
    }
}

/// The JSON a hook receives (field names as Claude Code sends them). The
/// tool fields are empty for events that are not about one call; fields
/// only some events have (`reason`, `tool_calls`, `source`, `prompt`…) are
/// in `extra`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HookInput {
    /// The session's id.
    pub session_id: String,
    /// The host's transcript file (empty when there is none).
    pub transcript_path: String,
    /// The working directory of the call (or of the session).
    pub cwd: String,
    /// The permission mode in force (`default`, `acceptEdits`, …).
    pub permission_mode: String,
    /// Which event this is.
    pub hook_event_name: HookEvent,
    /// The tool called (tool events only).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tool_name: String,
    /// The call's input (tool events only).
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub tool_input: Value,
    /// The call's `tool_use` id (tool events only).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tool_use_id: String,
    /// What the tool returned, in Claude Code's shape (`PostToolUse`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_response: Option<Value>,
    /// The error the call ended with (`PostToolUseFailure`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Who issued the call (programmatic tool calling), as the wire gave it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caller: Option<Value>,
    /// The fields only some events have, at the top level of the JSON.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl HookInput {
    /// An input for a non-tool event; `extra` holds its own fields.
    pub fn event(
        event: HookEvent,
        session_id: impl Into<String>,
        cwd: impl Into<String>,
        extra: Map<String, Value>,
    ) -> HookInput {
        HookInput {
            session_id: session_id.into(),
            transcript_path: String::new(),
            cwd: cwd.into(),
            permission_mode: "default".into(),
            hook_event_name: event,
            tool_name: String::new(),
            tool_input: Value::Null,
            tool_use_id: String::new(),
            tool_response: None,
            error: None,
            caller: None,
            extra,
        }
    }

    /// Marks the input as fired inside a subagent: `agent_id` and
    /// `agent_type` of the innermost one, as Claude Code sends them (absent
    /// on the main agent's calls).
    pub fn in_agent(mut self, chain: &crate::agent_chain::AgentChain) -> HookInput {
        if let Some(frame) = chain.current() {
            self.extra
                .insert("agent_id".into(), Value::String(frame.agent_id.clone()));
            self.extra
                .insert("agent_type".into(), Value::String(frame.agent_type.clone()));
        }
        self
    }

    /// What this event's matchers are compared with: the tool name for tool
    /// events, `source`/`trigger`/… for others, nothing (every matcher
    /// matches) when the event has no such field.
    pub fn match_query(&self) -> Option<&str> {
        match self.hook_event_name.match_field()? {
            // A call shown under a Claude Code name is matched by its real
            // one (which also selects the Claude Code names, see
            // `presented`).
            "tool_name" => self
                .extra
                .get(super::presented::REAL_NAME_FIELD)
                .and_then(Value::as_str)
                .or(Some(&self.tool_name)),
            field => self.extra.get(field).and_then(Value::as_str),
        }
    }
}
