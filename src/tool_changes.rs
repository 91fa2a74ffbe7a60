//! Anthropic mid-conversation tool changes for library and serve hosts
//! (see `baton_engine::wire::tool_changes`): instead of a rewritten
//! `tools` array, the host gets `tool_addition` / `tool_removal` blocks to
//! append when ToolSearch loads a tool or an MCP server changes its list.
//!
//! The record of what the model was offered lives in the session, so one
//! conversation per session is assumed (a host with several keeps its own
//! `ToolChanges` per conversation and feeds it `request_tools`).

use std::sync::Mutex;

use baton_engine::deferred::{deferral_of, set_deferral, Deferral};
use baton_engine::wire::tool_changes::{ToolChanges, ToolUpdate};
use baton_engine::wire::WireFormat;
use baton_engine::Session;

use crate::Engine;

/// The session's record, behind a lock (the session's slots hand out
/// shared references).
#[derive(Default)]
struct SessionToolChanges(Mutex<ToolChanges>);

/// Makes ToolSearch answer with definitions instead of `tool_reference`
/// blocks: a reference must name a tool the request's `tools` declared,
/// and with tool changes deferred tools are not declared but added later
/// by blocks.
pub fn use_tool_changes(session: &Session) {
    let deferral = deferral_of(session);
    if deferral.settings.tool_references {
        let mut changed: Deferral = (*deferral).clone();
        changed.settings.tool_references = false;
        set_deferral(session, changed);
    }
}

impl Engine {
    /// The next Anthropic request's tools as mid-conversation changes: the
    /// first call answers with the `tools` to declare (and no changes);
    /// each later one with the same `tools` and the blocks to append, in
    /// one `role: "system"` message, before the next request (none when
    /// nothing changed). The request needs the `anthropic-beta` header
    /// `baton_engine::wire::tool_changes::beta_header()`.
    ///
    /// The first call turns `tool_reference` answers of ToolSearch off for
    /// the session (see [`use_tool_changes`]).
    pub fn request_tool_changes(&self) -> ToolUpdate {
        let session = self.runtime.session();
        use_tool_changes(session);
        let now = self.request_tools_in_set(WireFormat::Anthropic);
        let record = session.slots().get_or_default::<SessionToolChanges>();
        let mut record = record.0.lock().unwrap_or_else(|e| e.into_inner());
        record.update(&now)
    }

    /// Forgets what the model was offered (after the host compacted its
    /// history): the next [`Engine::request_tool_changes`] declares afresh.
    pub fn reset_tool_changes(&self) {
        let record = self
            .runtime
            .session()
            .slots()
            .get_or_default::<SessionToolChanges>();
        record.0.lock().unwrap_or_else(|e| e.into_inner()).reset();
    }
}
