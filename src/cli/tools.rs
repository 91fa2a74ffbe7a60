//! `baton tools`: the pool in a wire format.

use baton::engine::wire::WireFormat;
use baton::engine::ToolPool;
use std::io::Write;

use super::CliError;

pub fn print(pool: &ToolPool, format: WireFormat) -> Result<(), CliError> {
    let mut defs = format.tool_definitions(pool);
    // Deferred tools (MCP tools, SPEC §10) are marked as the Anthropic API
    // marks them; the definitions follow the pool's order.
    if matches!(format, WireFormat::Anthropic) {
        if let Some(items) = defs.as_array_mut() {
            for (def, tool) in items.iter_mut().zip(pool.tools()) {
                if tool.def().is_deferred() {
                    def["defer_loading"] = serde_json::Value::Bool(true);
                }
            }
        }
    }
    let text = serde_json::to_string_pretty(&defs)
        .map_err(|e| CliError::Failed(format!("cannot render the tools: {e}")))?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}")
        .and_then(|_| out.flush())
        .map_err(|e| CliError::Failed(format!("cannot write to stdout: {e}")))
}
