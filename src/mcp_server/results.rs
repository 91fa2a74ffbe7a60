//! A Baton result as an MCP `CallToolResult`, and back.
//!
//! Text and images map to MCP content one to one. Structured output (a JSON
//! block) is sent twice, as MCP asks: as text for clients that only read
//! content, and as `structuredContent` when it is the result's only block.
//! How the call ended ([`Outcome`]: denied, cancelled while running, …) has no
//! MCP field; it travels in `_meta` under [`OUTCOME_META_KEY`] so that a Baton
//! host executing remotely gets back the same outcome a local run would give
//! (sibling cancellation depends on it). The tool's own views of its result
//! ([`ToolViews`]: the `tool_response` hooks get, the shell facts, the files
//! written) travel under [`VIEWS_META_KEY`], so that the host's hooks and
//! its `details` see what they would have seen had the tool run there.

use std::path::PathBuf;

use baton_engine::content::ContentBlock;
use baton_engine::output::Facts;
use baton_engine::shell_details::ShellDetails;
use baton_engine::{CallResult, Outcome};
use rmcp::model::CallToolResult;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

/// `_meta` key holding the call's [`Outcome`] (as its JSON form).
pub const OUTCOME_META_KEY: &str = "dev.baton/outcome";

/// `_meta` key holding the tool's [`ToolViews`], when it gave any.
pub const VIEWS_META_KEY: &str = "dev.baton/tool";

/// What a tool said about its result besides the content, as it crosses
/// to a remote host unchanged.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ToolViews {
    /// The `tool_response` PostToolUse hooks get (see
    /// [`baton_engine::ToolOutput::response`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response: Option<Value>,
    /// What a shell command did (exit code, stream tails, time-out).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shell: Option<ShellDetails>,
    /// Files the call wrote.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files_written: Vec<PathBuf>,
}

impl ToolViews {
    fn of(result: &CallResult) -> Option<ToolViews> {
        let views = ToolViews {
            response: result.response.clone(),
            shell: result.details.shell.clone(),
            files_written: result.details.files_written.clone(),
        };
        (views != ToolViews::default()).then_some(views)
    }

    /// The host's facts among them, as a tool's output carries them.
    pub fn facts(&self) -> Option<Facts> {
        let facts = Facts {
            shell: self.shell.clone(),
            files_written: self.files_written.clone(),
        };
        (facts != Facts::default()).then_some(facts)
    }
}

/// The MCP result for `result`.
pub(super) fn to_mcp(result: &CallResult) -> CallToolResult {
    let mut content = Vec::with_capacity(result.content.len());
    for block in &result.content {
        content.push(match block {
            ContentBlock::Text { text } => json!({"type": "text", "text": text}),
            ContentBlock::Image { media_type, data } => {
                json!({"type": "image", "mimeType": media_type, "data": data})
            }
            ContentBlock::Json { value } => json!({"type": "text", "text": value.to_string()}),
            // MCP has no tool references; say in text which tool was loaded.
            ContentBlock::ToolReference { .. } => {
                json!({"type": "text", "text": block.as_text().unwrap_or_default()})
            }
        });
    }
    let mut value = json!({
        "content": content,
        "resultType": "complete",
        "isError": result.is_error,
        "_meta": { OUTCOME_META_KEY: result.outcome },
    });
    if let Some(views) = ToolViews::of(result) {
        value["_meta"][VIEWS_META_KEY] = json!(views);
    }
    if let [ContentBlock::Json { value: structured }] = result.content.as_slice() {
        if structured.is_object() {
            value["structuredContent"] = structured.clone();
        }
    }
    from_json(value, &result.text(), result.is_error)
}

/// An error result made by the server itself (the call never reached the
/// engine, or the engine could not answer).
pub(super) fn server_error(text: String, outcome: Outcome) -> CallToolResult {
    let value = json!({
        "resultType": "complete",
        "content": [{"type": "text", "text": text}],
        "isError": true,
        "_meta": { OUTCOME_META_KEY: outcome },
    });
    from_json(value, &text, true)
}

fn from_json(value: Value, text: &str, is_error: bool) -> CallToolResult {
    match serde_json::from_value(value) {
        Ok(r) => r,
        // Only reachable if rmcp's type stopped accepting the MCP shape;
        // keep the text rather than lose the result.
        Err(_) => {
            let blocks = vec![rmcp::model::ContentBlock::text(text.to_string())];
            if is_error {
                CallToolResult::error(blocks)
            } else {
                CallToolResult::success(blocks)
            }
        }
    }
}

/// The outcome a Baton server put in a result's `_meta`, if any.
pub fn outcome_from_meta(meta: Option<&Map<String, Value>>) -> Option<Outcome> {
    let value = meta?.get(OUTCOME_META_KEY)?;
    serde_json::from_value(value.clone()).ok()
}

/// The tool's views a Baton server put in a result's `_meta`; empty when
/// there are none (another server, or a tool that gave none).
pub fn views_from_meta(meta: Option<&Map<String, Value>>) -> ToolViews {
    meta.and_then(|m| m.get(VIEWS_META_KEY))
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcome_round_trips_through_meta() {
        let mut r = CallResult::new(
            "c1",
            "Bash",
            vec![ContentBlock::text("stopped")],
            true,
            Outcome::Cancelled { started: true },
        );
        r.is_error = true;
        let mcp = to_mcp(&r);
        assert_eq!(mcp.is_error, Some(true));
        let meta = serde_json::to_value(&mcp).unwrap_or_default();
        let meta = meta["_meta"].as_object().cloned();
        assert_eq!(
            outcome_from_meta(meta.as_ref()),
            Some(Outcome::Cancelled { started: true })
        );
    }

    #[test]
    fn the_tools_views_round_trip_through_meta() {
        use baton_engine::shell_details::StreamTail;
        let mut r = CallResult::new(
            "c1",
            "Bash",
            vec![ContentBlock::text("out")],
            true,
            Outcome::ToolError,
        );
        r.response = Some(json!({"stdout": "out", "exitCode": 3, "timedOut": false}));
        r.details.shell = Some(ShellDetails {
            exit_code: Some(3),
            stdout: Some(StreamTail::of(b"out\n")),
            ..Default::default()
        });
        r.details.files_written = vec!["/w/a".into()];
        let mcp = serde_json::to_value(to_mcp(&r)).unwrap_or_default();
        let views = views_from_meta(mcp["_meta"].as_object());
        assert_eq!(views.response, r.response);
        assert_eq!(views.shell, r.details.shell);
        assert_eq!(views.files_written, r.details.files_written);
        // A result without any carries no key.
        let plain = CallResult::new("c2", "X", vec![], false, Outcome::Success);
        let mcp = serde_json::to_value(to_mcp(&plain)).unwrap_or_default();
        assert!(mcp["_meta"].get(VIEWS_META_KEY).is_none(), "{mcp}");
    }

    #[test]
    fn a_single_json_block_is_also_structured_content() {
        let r = CallResult::new(
            "c1",
            "TodoWrite",
            vec![ContentBlock::json(json!({"todos": 2}))],
            false,
            Outcome::Success,
        );
        let v = serde_json::to_value(to_mcp(&r)).unwrap_or_default();
        assert_eq!(v["structuredContent"], json!({"todos": 2}));
        assert_eq!(v["content"][0]["text"], json!("{\"todos\":2}"));
    }
}
