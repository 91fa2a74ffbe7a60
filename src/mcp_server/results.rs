//! A Baton result as an MCP `CallToolResult`, and back.
//!
//! Text and images map to MCP content one to one. Structured output (a JSON
//! block) is sent twice, as MCP asks: as text for clients that only read
//! content, and as `structuredContent` when it is the result's only block.
//! How the call ended ([`Outcome`]: denied, cancelled while running, …) has no
//! MCP field; it travels in `_meta` under [`OUTCOME_META_KEY`] so that a Baton
//! host executing remotely gets back the same outcome a local run would give
//! (sibling cancellation depends on it).

use baton_engine::content::ContentBlock;
use baton_engine::{CallResult, Outcome};
use rmcp::model::CallToolResult;
use serde_json::{json, Map, Value};

/// `_meta` key holding the call's [`Outcome`] (as its JSON form).
pub const OUTCOME_META_KEY: &str = "dev.baton/outcome";

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
        });
    }
    let mut value = json!({
        "content": content,
        "resultType": "complete",
        "isError": result.is_error,
        "_meta": { OUTCOME_META_KEY: result.outcome },
    });
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
