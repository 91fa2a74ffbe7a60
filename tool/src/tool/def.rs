//! A tool's static description: everything that does not depend on input.

use serde_json::Value;

/// What a running call does when the user types a new message (SPEC §7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum InterruptBehavior {
    /// Stop the call.
    Cancel,
    /// Let the call finish and keep its real result.
    #[default]
    Block,
}

/// Where a tool comes from; decides pool order and deferral (SPEC §3, §10).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ToolOrigin {
    /// One of Baton's built-in tools (the default).
    #[default]
    BuiltIn,
    /// A tool of an MCP server; its name is `mcp__<server>__<tool>`.
    Mcp {
        /// The server's configured name.
        server: String,
    },
    /// Supplied by the host at run time.
    Host,
}

/// What a running call mostly spends its time on; picks the concurrency
/// pool it counts against (SPEC §5). Declared per tool, not per input, so a
/// rewritten input (an approval, a hook) cannot move a call between pools
/// after it was scheduled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum WorkKind {
    /// Starts processes or works the CPU and disk: counts against the small,
    /// machine-sized pool. The default, so a tool that says nothing cannot
    /// overload the machine.
    #[default]
    Process,
    /// Mostly waits on something outside the machine's CPU (a network
    /// request, a timer, a model): counts against the large pool.
    Wait,
}

/// Which of Claude Code's tools a tool stands in for, when it is not that
/// tool by name. Users' hooks and settings were written for Claude Code's
/// names and fields (a guard on `Bash` reading `tool_input.command`), so a
/// tool of another tool set that does the same job declares it here, and
/// the engine shows and judges its calls as that job: never by matching
/// the tool's name. Declared per tool, so a remote twin keeps it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ToolKind {
    /// No stand-in: hooks see the tool under its own name and input.
    #[default]
    Own,
    /// Runs one shell command, whose text is the string field `command`
    /// of its input. Hooks see the call as `Bash` with the text as
    /// `command` (a hook's rewrite of it goes back into that field), and
    /// `autoAllowBashIfSandboxed` covers it as it covers Bash. Bash itself
    /// declares `Shell { command: "command" }`; codex's `exec_command`
    /// declares `"cmd"`.
    Shell {
        /// The input field that holds the command text.
        command: &'static str,
    },
    /// Writes the files its permission targets name (a patch). Hooks see
    /// the call as an `Edit` of each of those paths, with `file_path`.
    Patch,
}

impl ToolKind {
    /// The command text of a call with `input`, for a shell tool.
    pub fn command_text(&self, input: &Value) -> Option<String> {
        match self {
            ToolKind::Shell { command } => input.get(*command)?.as_str().map(str::to_string),
            _ => None,
        }
    }
}

/// Default size, in characters, above which a result is spilled to a file.
pub const DEFAULT_MAX_RESULT_SIZE_CHARS: usize = 100_000;

/// Static metadata of a tool. Built with [`ToolDef::new`], which fills the
/// fail-closed defaults; setters change one thing each.
#[derive(Clone, Debug)]
pub struct ToolDef {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) prompt: Option<String>,
    pub(crate) aliases: Vec<String>,
    pub(crate) search_hint: Option<String>,
    pub(crate) output_schema: Option<Value>,
    pub(crate) interrupt: InterruptBehavior,
    pub(crate) should_defer: bool,
    pub(crate) always_load: bool,
    pub(crate) max_result_size_chars: Option<usize>,
    pub(crate) origin: ToolOrigin,
    pub(crate) cancels_siblings_on_error: bool,
    pub(crate) work: WorkKind,
    pub(crate) kind: ToolKind,
}

impl ToolDef {
    /// A tool named `name`, described to the model by `description`; not
    /// deferred, blocking on interrupt, results spilled past 100,000 chars.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        ToolDef {
            name: name.into(),
            description: description.into(),
            prompt: None,
            aliases: Vec::new(),
            search_hint: None,
            output_schema: None,
            interrupt: InterruptBehavior::Block,
            should_defer: false,
            always_load: false,
            max_result_size_chars: Some(DEFAULT_MAX_RESULT_SIZE_CHARS),
            origin: ToolOrigin::BuiltIn,
            cancels_siblings_on_error: false,
            work: WorkKind::Process,
            kind: ToolKind::Own,
        }
    }

    /// Longer instructions for the model; the description is used otherwise.
    pub fn prompt(mut self, prompt: impl Into<String>) -> Self {
        self.prompt = Some(prompt.into());
        self
    }

    /// Another name the pool finds the tool by (an older name models still
    /// use); a real tool's name wins over an alias.
    pub fn alias(mut self, alias: impl Into<String>) -> Self {
        self.aliases.push(alias.into());
        self
    }

    /// Words `ToolSearch` matches besides the name and description.
    pub fn search_hint(mut self, hint: impl Into<String>) -> Self {
        self.search_hint = Some(hint.into());
        self
    }

    /// The JSON Schema of the tool's structured output (published by
    /// `baton mcp serve` as `outputSchema`).
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// What a running call does when the user sends a new message (default:
    /// [`InterruptBehavior::Block`]).
    pub fn interrupt(mut self, behavior: InterruptBehavior) -> Self {
        self.interrupt = behavior;
        self
    }

    /// Whether the tool is offered by name only until `ToolSearch` finds it
    /// (SPEC §10); MCP tools are deferred anyway.
    pub fn should_defer(mut self, defer: bool) -> Self {
        self.should_defer = defer;
        self
    }

    /// Never deferred, even as an MCP tool.
    pub fn always_load(mut self, always: bool) -> Self {
        self.always_load = always;
        self
    }

    /// `None`: the tool bounds its own output and is never spilled (Read).
    pub fn max_result_size_chars(mut self, max: Option<usize>) -> Self {
        self.max_result_size_chars = max;
        self
    }

    /// Where the tool comes from (default: [`ToolOrigin::BuiltIn`]).
    pub fn origin(mut self, origin: ToolOrigin) -> Self {
        self.origin = origin;
        self
    }

    /// An error result of this tool may cancel its siblings (SPEC §8); Bash
    /// sets this.
    pub fn cancels_siblings_on_error(mut self, yes: bool) -> Self {
        self.cancels_siblings_on_error = yes;
        self
    }

    /// Which concurrency pool this tool's calls count against (default
    /// [`WorkKind::Process`]). Mark a tool [`WorkKind::Wait`] only when its
    /// calls start no process and do little CPU work of their own.
    pub fn work_kind(mut self, kind: WorkKind) -> Self {
        self.work = kind;
        self
    }

    /// Which of Claude Code's tools this one stands in for (default
    /// [`ToolKind::Own`]); see [`ToolKind`].
    pub fn tool_kind(mut self, kind: ToolKind) -> Self {
        self.kind = kind;
        self
    }

    /// The name the model calls the tool by.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The short description (see [`Self::prompt_text`] for what the model
    /// reads).
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The text the model reads: the prompt if given, else the description.
    pub fn prompt_text(&self) -> &str {
        self.prompt.as_deref().unwrap_or(&self.description)
    }

    /// The other names the pool finds the tool by.
    pub fn aliases(&self) -> &[String] {
        &self.aliases
    }

    /// The words set by [`Self::search_hint`], if any.
    pub fn search_hint_text(&self) -> Option<&str> {
        self.search_hint.as_deref()
    }

    /// The schema set by [`Self::output_schema`], if any.
    pub fn output_schema_value(&self) -> Option<&Value> {
        self.output_schema.as_ref()
    }

    /// What a running call does on a new message.
    pub fn interrupt_behavior(&self) -> InterruptBehavior {
        self.interrupt
    }

    /// The size past which a result is spilled to a file; `None`: never.
    pub fn max_result_chars(&self) -> Option<usize> {
        self.max_result_size_chars
    }

    /// Where the tool comes from.
    pub fn tool_origin(&self) -> &ToolOrigin {
        &self.origin
    }

    /// Whether the tool belongs to an MCP server.
    pub fn is_mcp(&self) -> bool {
        matches!(self.origin, ToolOrigin::Mcp { .. })
    }

    /// Which concurrency pool the tool's calls count against.
    pub fn work(&self) -> WorkKind {
        self.work
    }

    /// See [`ToolDef::tool_kind`].
    pub fn kind(&self) -> ToolKind {
        self.kind
    }

    /// Whether an error result of this tool may cancel its siblings.
    pub fn triggers_sibling_cancel(&self) -> bool {
        self.cancels_siblings_on_error
    }

    /// Deferred tools are offered by name only until discovered (SPEC §10).
    pub fn is_deferred(&self) -> bool {
        !self.always_load && (self.is_mcp() || self.should_defer)
    }
}
