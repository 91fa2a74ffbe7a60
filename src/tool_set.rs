//! Which tool set requests carry (`--tool-set`): Claude Code's, the
//! default, or codex's (see `baton_engine::wire::codex`).
//!
//! The codex set is a translation at the wire over the same tools, plus
//! the `apply_patch` tool, which the Claude set does not have. So a host
//! that mixes model families gives each the tools it was trained on with
//! one engine's rules, hooks, sandbox and scheduling underneath.

use std::sync::Arc;

use baton_engine::deferred::RequestTools;
use baton_engine::wire::{codex, ToolSet, WireFormat};
use baton_engine::{Tool, ToolUse};

use crate::{Engine, EngineBuilder};

/// The tools the codex set needs besides the built-ins: `apply_patch`.
/// (codex's `exec_command` and `write_stdin` are built-ins of the same
/// names, deferred in the Claude set; a codex request offers them up front,
/// see `baton_engine::wire::codex::definitions`.)
pub fn codex_tools() -> Result<Vec<Arc<Tool>>, baton_engine::schema::InvalidSchema> {
    Ok(vec![Arc::new(baton_tools::apply_patch::tool()?)])
}

impl EngineBuilder {
    /// Requests carry `set`'s names and schemas, and calls in those names
    /// run as the tools underneath. For [`ToolSet::Codex`] the pool should
    /// hold [`codex_tools`] (the CLI adds them).
    pub fn tool_set(mut self, set: ToolSet) -> Self {
        self.services = self.services.with_arc(Arc::new(set));
        self
    }
}

impl Engine {
    /// The tool set chosen with [`EngineBuilder::tool_set`].
    pub fn tool_set(&self) -> ToolSet {
        self.runtime
            .session()
            .slots()
            .get::<ToolSet>()
            .map_or(ToolSet::Claude, |s| *s)
    }

    /// [`Engine::request_tools`] in the engine's tool set.
    pub fn request_tools_in_set(&self, format: WireFormat) -> RequestTools {
        in_set(
            self.tool_set(),
            self.runtime.pipeline().pool(),
            format,
            self.request_tools(format),
        )
    }
}

/// `tools` rewritten for `set`.
pub fn in_set(
    set: ToolSet,
    pool: &baton_engine::ToolPool,
    format: WireFormat,
    mut tools: RequestTools,
) -> RequestTools {
    if set == ToolSet::Codex {
        tools.tools = codex::request_definitions(pool, format, std::mem::take(&mut tools.tools));
    }
    tools
}

/// A call in `set`'s names as the call of the tool underneath.
pub fn translate(set: ToolSet, call: ToolUse) -> ToolUse {
    match set {
        ToolSet::Codex => codex::translate(call),
        _ => call,
    }
}
