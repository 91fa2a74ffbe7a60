//! `tool_response`: what PostToolUse and PostToolBatch hooks are given as a
//! call's result.
//!
//! The tool builds it ([`baton_tool::output::ToolOutput::response`]):
//! Baton's built-ins give Claude Code's shape for the same job (Bash's
//! `stdout`, `stderr`, `interrupted`; Write's `filePath`; Read's
//! `file.content`), which published hooks read. The engine passes it on as
//! the tool made it (from a remote worker too) and never rebuilds a shape
//! from the tool's name or from the text the model sees. A tool that gives
//! none (a host's own, an MCP server's), and a result the tool did not make
//! (a denial, a validation error), gets the content blocks, as Claude Code
//! gives MCP results.

use serde_json::Value;

use baton_tool::call::CallResult;

/// The `tool_response` for a finished call.
pub fn tool_response(result: &CallResult) -> Value {
    match &result.response {
        Some(response) => response.clone(),
        None => serde_json::to_value(&result.content).unwrap_or(Value::Null),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_tool::call::Outcome;
    use baton_tool::content::ContentBlock;
    use serde_json::json;

    #[test]
    fn the_tools_own_response_or_else_the_content_blocks() {
        let mut result = CallResult::new(
            "c",
            "Read",
            vec![ContentBlock::text("     1\talpha")],
            false,
            Outcome::Success,
        );
        // Whatever the name, no shape is made up from the text.
        assert_eq!(
            tool_response(&result),
            json!([{"type": "text", "text": "     1\talpha"}])
        );
        result.response = Some(json!({"type": "text", "file": {"content": "alpha\n"}}));
        assert_eq!(tool_response(&result)["file"]["content"], "alpha\n");
    }
}
