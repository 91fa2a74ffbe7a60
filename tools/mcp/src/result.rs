//! A `tools/call` result as content blocks.
//!
//! Works on the JSON form of the result, so content types this version of
//! rmcp does not model are still shown rather than lost.

use baton_engine::{ContentBlock, ToolOutput};
use serde_json::Value;

/// Maps a `CallToolResult` (as JSON) to Baton's output.
pub fn map_result(result: &Value) -> ToolOutput {
    let mut content = Vec::new();
    if let Some(items) = result.get("content").and_then(Value::as_array) {
        for item in items {
            content.push(map_content(item));
        }
    }
    // Servers are asked to repeat structured content as text, so the model
    // sees it only when there is no other content.
    if content.is_empty() {
        if let Some(structured) = result.get("structuredContent").filter(|v| !v.is_null()) {
            content.push(ContentBlock::json(structured.clone()));
        }
    }
    ToolOutput {
        content,
        is_error: result
            .get("isError")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        ..Default::default()
    }
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// One content item.
pub(crate) fn map_content(item: &Value) -> ContentBlock {
    match str_of(item, "type") {
        "text" => ContentBlock::text(str_of(item, "text")),
        "image" => ContentBlock::image(str_of(item, "mimeType"), str_of(item, "data")),
        "audio" => ContentBlock::text(format!(
            "[audio {}, {} bytes; audio is not passed to the model]",
            str_of(item, "mimeType"),
            base64_len(str_of(item, "data"))
        )),
        "resource_link" => {
            let mut text = format!("[resource link] {}", str_of(item, "uri"));
            for key in ["name", "title", "mimeType", "description"] {
                let v = str_of(item, key);
                if !v.is_empty() {
                    text.push_str(&format!("\n{key}: {v}"));
                }
            }
            ContentBlock::text(text)
        }
        "resource" => {
            let resource = item.get("resource").unwrap_or(&Value::Null);
            embedded(resource)
        }
        _ => ContentBlock::json(item.clone()),
    }
}

/// An embedded resource (also a `resources/read` content item).
pub(crate) fn embedded(resource: &Value) -> ContentBlock {
    let uri = str_of(resource, "uri");
    let mime = str_of(resource, "mimeType");
    if let Some(text) = resource.get("text").and_then(Value::as_str) {
        return ContentBlock::text(format!("[resource {uri}]\n{text}"));
    }
    let blob = str_of(resource, "blob");
    if mime.starts_with("image/") && !blob.is_empty() {
        return ContentBlock::image(mime, blob);
    }
    ContentBlock::text(format!(
        "[resource {uri}: binary {}, {} bytes, not shown]",
        if mime.is_empty() { "data" } else { mime },
        base64_len(blob)
    ))
}

fn base64_len(data: &str) -> usize {
    let pad = data.bytes().rev().take_while(|b| *b == b'=').count();
    (data.len() / 4 * 3).saturating_sub(pad)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_content_type_maps() {
        let out = map_result(&json!({
            "content": [
                {"type": "text", "text": "hi"},
                {"type": "image", "mimeType": "image/png", "data": "iVBO"},
                {"type": "audio", "mimeType": "audio/wav", "data": "AAAA"},
                {"type": "resource_link", "uri": "file:///a", "name": "a"},
                {"type": "resource", "resource": {"uri": "x://t", "text": "body"}},
                {"type": "resource", "resource": {"uri": "x://b", "mimeType": "application/zip", "blob": "AAAA"}},
                {"type": "future-kind", "x": 1}
            ],
            "isError": true
        }));
        assert!(out.is_error);
        let c = &out.content;
        assert_eq!(c[0], ContentBlock::text("hi"));
        assert!(c[1].is_image());
        assert!(c[2].as_text().unwrap().contains("audio/wav, 3 bytes"));
        assert!(c[3].as_text().unwrap().contains("file:///a"));
        assert_eq!(c[4], ContentBlock::text("[resource x://t]\nbody"));
        assert!(c[5].as_text().unwrap().contains("application/zip, 3 bytes"));
        assert!(matches!(c[6], ContentBlock::Json { .. }));
    }

    #[test]
    fn structured_content_shown_when_there_is_no_content() {
        let s = json!({"t": 1});
        let alone = map_result(&json!({"content": [], "structuredContent": s}));
        assert_eq!(alone.content, vec![ContentBlock::json(s.clone())]);
        let with_text = map_result(
            &json!({"content": [{"type": "text", "text": "see data"}], "structuredContent": s}),
        );
        assert_eq!(with_text.content, vec![ContentBlock::text("see data")]);
        assert!(!with_text.is_error);
    }
}
