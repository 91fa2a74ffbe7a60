//! `baton tools`: the tool list of the next model request, as a host would
//! send it (deferred tools marked or left out, per format).

use std::io::Write;

use baton::engine::deferred::{RequestTools, TOOL_SEARCH};
use baton::engine::wire::WireFormat;
use baton::engine::ToolPool;
use baton::Engine;

use super::CliError;

/// `baton tools`: the next request's tool list, or (`--list`) one line per
/// tool saying whether it is loaded or deferred.
pub(super) fn print(
    engine: &Engine,
    pool: &ToolPool,
    format: WireFormat,
    list: bool,
) -> Result<(), CliError> {
    let request = engine.request_tools_in_set(format);
    let text = if list {
        listing(engine, pool, &request)
    } else {
        serde_json::to_string_pretty(&request.tools)
            .map_err(|e| CliError::Failed(format!("cannot render the tools: {e}")))?
    };
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}")
        .and_then(|_| out.flush())
        .map_err(|e| CliError::Failed(format!("cannot write to stdout: {e}")))
}

fn listing(engine: &Engine, pool: &ToolPool, request: &RequestTools) -> String {
    let deferral = engine.deferral();
    let mut lines = Vec::new();
    for tool in pool.tools() {
        let state = if request.deferred.iter().any(|n| n == tool.name()) {
            "deferred"
        } else if request.loaded.iter().any(|n| n == tool.name()) {
            "loaded (searched)"
        } else if tool.name() == TOOL_SEARCH && !deferral.active {
            "off"
        } else {
            "loaded"
        };
        lines.push(format!("{state:<18}{}", tool.name()));
    }
    lines.push(format!(
        "tool search: {} ({}); deferrable definitions ≈ {} tokens of a {}-token window",
        deferral.settings.mode,
        if deferral.active {
            "active"
        } else {
            "inactive"
        },
        deferral.deferrable_tokens,
        deferral.settings.context_window_tokens,
    ));
    lines.join("\n")
}
