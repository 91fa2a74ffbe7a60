//! `tool_response` as Claude Code gives it to PostToolUse hooks.
//!
//! Claude Code hands hooks each built-in tool's structured result (the
//! agent SDK's `sdk-tools.d.ts` output types): Bash gives `stdout`,
//! `stderr`, `interrupted`; Write and Edit give `filePath` and the text;
//! Read gives `file.content`. Published hooks read those fields
//! (`.tool_response.stdout`, `.tool_response.filePath`), so Baton sends the
//! same shapes. A tool that knows its structured result sets it
//! ([`baton_tool::output::ToolOutput::response`]); otherwise the shape is built
//! here from the call's input and the text the model sees. Tools Claude
//! Code does not have (a host's own, MCP) get the content blocks, as
//! Claude Code gives MCP results.

use serde_json::{json, Value};

use baton_tool::call::CallResult;

/// The `tool_response` for a finished call.
pub fn tool_response(tool_name: &str, input: &Value, result: &CallResult) -> Value {
    if let Some(response) = &result.response {
        return response.clone();
    }
    let text = result.text();
    let s = |key: &str| input.get(key).and_then(Value::as_str).unwrap_or("");
    match tool_name {
        "Bash" => json!({
            "stdout": text,
            "stderr": "",
            "interrupted": false,
            "isImage": false,
        }),
        "Write" => json!({
            "type": if text.starts_with("Created") { "create" } else { "update" },
            "filePath": s("file_path"),
            "content": s("content"),
            "structuredPatch": [],
            "originalFile": Value::Null,
        }),
        "Edit" => json!({
            "filePath": s("file_path"),
            "oldString": s("old_string"),
            "newString": s("new_string"),
            "originalFile": Value::Null,
            "structuredPatch": [],
            "userModified": false,
            "replaceAll": input.get("replace_all").and_then(Value::as_bool).unwrap_or(false),
        }),
        "Read" => {
            let (content, first, count) = strip_line_numbers(&text);
            json!({
                "type": "text",
                "file": {
                    "filePath": s("file_path"),
                    "content": content,
                    "numLines": count,
                    "startLine": first.unwrap_or(1),
                    "totalLines": count,
                }
            })
        }
        "Glob" => {
            let filenames: Vec<&str> = text.lines().filter(|l| l.starts_with('/')).collect();
            json!({
                "filenames": filenames,
                "numFiles": filenames.len(),
                "truncated": false,
                "durationMs": 0,
            })
        }
        "Grep" => {
            let mode = match s("output_mode") {
                "" => "files_with_matches",
                m => m,
            };
            let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
            if mode == "files_with_matches" {
                json!({"mode": mode, "filenames": lines, "numFiles": lines.len()})
            } else {
                json!({"mode": mode, "filenames": [], "numFiles": 0, "content": text, "numLines": lines.len()})
            }
        }
        "WebFetch" => json!({
            "bytes": text.len(),
            "code": 200,
            "codeText": "OK",
            "result": text,
            "durationMs": 0,
            "url": s("url"),
        }),
        "TodoWrite" => json!({
            "oldTodos": [],
            "newTodos": input.get("todos").cloned().unwrap_or(json!([])),
        }),
        "NotebookEdit" => json!({
            "new_source": s("new_source"),
            "cell_id": s("cell_id"),
            "cell_type": match s("cell_type") { "" => "code", t => t },
            "language": "python",
            "edit_mode": match s("edit_mode") { "" => "replace", m => m },
            "notebook_path": s("notebook_path"),
        }),
        "TaskStop" => json!({
            "message": text,
            "task_id": s("task_id"),
            "task_type": "local_bash",
        }),
        _ => serde_json::to_value(&result.content).unwrap_or(Value::Null),
    }
}

/// Read's `cat -n` rendering back to the file's text: the content, the
/// first line number and the number of lines.
fn strip_line_numbers(text: &str) -> (String, Option<u64>, usize) {
    let mut first = None;
    let mut out = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        match trimmed.split_once('\t') {
            Some((no, rest)) if !no.is_empty() && no.chars().all(|c| c.is_ascii_digit()) => {
                if first.is_none() {
                    first = no.parse().ok();
                }
                out.push(rest);
            }
            // Notes Baton adds after the lines (truncation, empty file).
            _ => {}
        }
    }
    let count = out.len();
    let mut content = out.join("\n");
    if count > 0 {
        content.push('\n');
    }
    (content, first, count)
}
