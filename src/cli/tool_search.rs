//! The tool search options every command shares (SPEC §10).

use baton::engine::deferred::{ToolSearchMode, ToolSearchSettings};
use baton::engine::wire::WireFormat;
use clap::Args;

use super::CliError;

#[derive(Args, Debug, Clone, Default)]
pub(super) struct ToolSearchArgs {
    /// Tool search: true (deferred tools offered by name only), false, auto
    /// or auto:N (only when their definitions exceed N % of the context
    /// window). Default: $ENABLE_TOOL_SEARCH, else true.
    #[arg(long, value_parser = parse_mode)]
    tool_search: Option<ToolSearchMode>,
    /// The model's context window in tokens, for auto (default 200000).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    context_window: Option<u64>,
    /// The host's wire format, in which ToolSearch returns definitions:
    /// anthropic (default), openai-chat or openai-responses.
    #[arg(long, value_parser = parse_format)]
    tool_format: Option<WireFormat>,
    /// The host's API does not accept `defer_loading` / `tool_reference`
    /// (a proxy or another provider behind the Anthropic format).
    #[arg(long)]
    no_tool_references: bool,
}

fn parse_mode(s: &str) -> Result<ToolSearchMode, baton::engine::deferred::ToolSearchModeError> {
    s.parse()
}

pub(super) fn parse_format(s: &str) -> Result<WireFormat, String> {
    s.parse()
}

impl ToolSearchArgs {
    /// The settings: the environment, then these options.
    pub(super) fn settings(
        &self,
        format: Option<WireFormat>,
    ) -> Result<ToolSearchSettings, CliError> {
        let mut settings =
            ToolSearchSettings::from_env().map_err(|e| CliError::Usage(e.to_string()))?;
        if let Some(mode) = self.tool_search {
            settings.mode = mode;
        }
        if let Some(tokens) = self.context_window {
            settings.context_window_tokens = tokens;
        }
        if let Some(format) = format.or(self.tool_format) {
            settings.format = format;
        }
        settings.tool_references = !self.no_tool_references;
        Ok(settings)
    }
}

/// The serve protocol's answer to `{"type":"tools"}`: the next request's
/// tool list in the format asked for (default: the session's).
pub(super) fn tools_line(
    engine: &baton::Engine,
    msg: &serde_json::Value,
) -> Result<serde_json::Value, String> {
    let format = match msg.get("format") {
        None | Some(serde_json::Value::Null) => engine.deferral().settings.format,
        Some(serde_json::Value::String(s)) => s.parse()?,
        Some(_) => return Err("`format` must be a string".into()),
    };
    let changes = match msg.get("changes") {
        None | Some(serde_json::Value::Null) => false,
        Some(serde_json::Value::Bool(b)) => *b,
        Some(_) => return Err("`changes` must be true or false".into()),
    };
    if changes && format != WireFormat::Anthropic {
        return Err(format!(
            "`changes` is for the anthropic format (tool_addition/tool_removal blocks), not {format}"
        ));
    }
    // With `changes`, ToolSearch stops answering with references first, so
    // the lists below are read after that.
    let update = changes.then(|| engine.request_tool_changes());
    let mut line = serde_json::to_value(engine.request_tools_in_set(format))
        .map_err(|e| format!("cannot render the tools: {e}"))?;
    if let Some(update) = update {
        line["tools"] = serde_json::json!(update.tools);
        line["tool_changes"] = serde_json::json!(update.changes);
        line["beta"] = serde_json::json!(baton::engine::wire::tool_changes::beta_header());
    }
    line["type"] = serde_json::json!("tools");
    Ok(line)
}
