//! Deferred tools (SPEC §10): tools offered by name only until the model
//! loads them with ToolSearch.
//!
//! A host with many MCP servers cannot send every definition in every
//! request. Baton keeps the session's state for this in the session's slots:
//! the resolved [`Deferral`] (is tool search on?) and the
//! [`DiscoveredTools`]. From them it answers the two questions a host has
//! before each request ([`request_tools`], rendered by the wire layer, and
//! [`deferred_names`]); the pipeline
//! uses them for the "load it first" hint, and the ToolSearch tool (in the
//! tools crate) for its results. The batch's pool reaches tools through
//! [`PoolService`].

mod discovered;
mod mode;
mod request;

use std::sync::Arc;

pub use baton_wire::RequestTools;
pub use discovered::{DiscoveredTools, Mark};
pub use mode::{
    estimate_tokens, Deferral, ToolSearchMode, ToolSearchModeError, ToolSearchSettings,
    BYTES_PER_TOKEN, DEFAULT_AUTO_PERCENT, DEFAULT_CONTEXT_WINDOW_TOKENS,
};
pub use request::request_tools;

use baton_tool::context::ToolContext;
use baton_tool::pool::ToolPool;
use baton_tool::session::Session;
use baton_tool::tool::Tool;

/// The name of the search tool, which is never deferred.
pub const TOOL_SEARCH: &str = "ToolSearch";

/// The pool of the batch a call runs in, restrictions included; the runtime
/// puts it into [`ToolContext::services`] of every call.
#[derive(Clone, Debug)]
pub struct PoolService(pub ToolPool);

impl PoolService {
    /// The pool of `ctx`'s batch, if the runtime offered one.
    pub fn of(ctx: &ToolContext) -> Option<ToolPool> {
        ctx.services.get::<PoolService>().map(|s| s.0.clone())
    }
}

/// The session's deferral state (the default, "always", if the host set none).
pub fn deferral_of(session: &Session) -> Arc<Deferral> {
    session.slots().get_or_default::<Deferral>()
}

/// Stores the deferral state of a session (done once, by the engine builder).
pub fn set_deferral(session: &Session, deferral: Deferral) {
    session.slots().insert(Arc::new(deferral));
}

/// Whether `tool` is offered by name only in this session: tool search is
/// on, the tool is deferrable, and ToolSearch is there to load it (without
/// it, holding the tool back would make it unreachable).
pub fn is_deferred_now(tool: &Tool, pool: &ToolPool, deferral: &Deferral) -> bool {
    deferral.active
        && tool.name() != TOOL_SEARCH
        && tool.def().is_deferred()
        && pool.get(TOOL_SEARCH).is_some()
}

/// Whether a call to `tool` that fails its schema should be told to load the
/// tool first: it is deferred now and the model has not loaded it.
pub fn needs_load_hint(tool: &Tool, pool: &ToolPool, session: &Session) -> bool {
    is_deferred_now(tool, pool, &deferral_of(session))
        && !session
            .slots()
            .get_or_default::<DiscoveredTools>()
            .contains(tool.name())
}

/// Deferred tools the model has not loaded yet, in pool order.
pub fn deferred_names(pool: &ToolPool, session: &Session) -> Vec<String> {
    let deferral = deferral_of(session);
    let discovered = session.slots().get_or_default::<DiscoveredTools>();
    pool.tools()
        .filter(|t| is_deferred_now(t, pool, &deferral) && !discovered.contains(t.name()))
        .map(|t| t.name().to_string())
        .collect()
}

/// The announcement of deferred tools by name.
pub fn reminder(deferred: &[String]) -> Option<String> {
    if deferred.is_empty() {
        return None;
    }
    Some(format!(
        "<system-reminder>\nThese tools are available but their definitions are not loaded yet. \
         To use one, first call ToolSearch with query \"select:<name>\" (several: \
         \"select:A,B\"), or with keywords to find tools by what they do:\n{}\n</system-reminder>",
        deferred.join("\n")
    ))
}
