//! `baton tools`: the pool in a wire format.

use baton::engine::wire::WireFormat;
use baton::engine::ToolPool;
use std::io::Write;

use super::CliError;

pub fn print(pool: &ToolPool, format: WireFormat) -> Result<(), CliError> {
    let defs = format.tool_definitions(pool);
    let text = serde_json::to_string_pretty(&defs)
        .map_err(|e| CliError::Failed(format!("cannot render the tools: {e}")))?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}")
        .and_then(|_| out.flush())
        .map_err(|e| CliError::Failed(format!("cannot write to stdout: {e}")))
}
