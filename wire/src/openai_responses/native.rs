//! OpenAI's native local tools on the Responses API: items the client
//! executes that are not `function_call`s.
//!
//! | item in | runs as | answered by |
//! |---|---|---|
//! | `shell_call` (`action.commands`, `timeout_ms`, `max_output_length`) | `Bash` | `shell_call_output` |
//! | `local_shell_call` (`action.command` argv, …) | `Bash` | `local_shell_call_output` |
//! | `apply_patch_call` (`operation` with a V4A diff) | `apply_patch` | `apply_patch_call_output` |
//! | `custom_tool_call` (freeform `input`) | the named tool, `{"input": …}` | `custom_tool_call_output` |
//!
//! A shell command becomes a `Bash` call so that `Bash(...)` rules, the
//! read-only judgement, hooks matching `Bash` and the sandbox see it as
//! they see any other command; a patch becomes an `apply_patch` call, which
//! is judged as an edit of each path it names.

use serde_json::{json, Value};

use baton_tool::call::{CallResult, ToolUse};

/// The item types of this module.
pub const KINDS: [&str; 4] = [
    "shell_call",
    "local_shell_call",
    "apply_patch_call",
    "custom_tool_call",
];

/// Whether `kind` is an item type a client executes (these or
/// `function_call`).
pub fn is_call(kind: &str) -> bool {
    kind == "function_call" || KINDS.contains(&kind)
}

/// The call an item of one of [`KINDS`] asks for; `None` for any other item.
/// A malformed item becomes a call whose input error says what is wrong, so
/// it is answered (in its own output type) rather than lost.
pub fn call_of(item: &Value) -> Option<Result<ToolUse, String>> {
    let kind = item.get("type").and_then(Value::as_str)?;
    if !KINDS.contains(&kind) {
        return None;
    }
    let Some(id) = item
        .get("call_id")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
    else {
        return Some(Err(format!("a `{kind}` item without a `call_id`")));
    };
    let built = match kind {
        "shell_call" => shell(item),
        "local_shell_call" => local_shell(item),
        "apply_patch_call" => patch(item).map(|p| json!({"input": p})),
        _ => custom(item),
    };
    let caller = item.get("caller").filter(|c| !c.is_null()).cloned();
    // The tool is told by the item's type alone, so a malformed item is
    // refused under the name a well-formed one would run as.
    let name = runs_as(kind, item);
    Some(Ok(match built {
        Ok(input) => ToolUse::new(id, name, input),
        Err(reason) => {
            let mut call = ToolUse::new(id, name, json!({}));
            call.input_error = Some(reason);
            call
        }
    }
    .with_caller(caller)))
}

/// The tool an item of type `kind` runs as: `Bash` for the shells,
/// `apply_patch` for patches, the named tool for a custom call (its type
/// when it names none).
fn runs_as<'a>(kind: &'a str, item: &'a Value) -> &'a str {
    match kind {
        "shell_call" | "local_shell_call" => "Bash",
        "apply_patch_call" => "apply_patch",
        _ => item
            .get("name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .unwrap_or(kind),
    }
}

fn shell(item: &Value) -> Result<Value, String> {
    let action = item
        .get("action")
        .ok_or("a `shell_call` without `action`")?;
    let commands: Vec<&str> = action
        .get("commands")
        .and_then(Value::as_array)
        .ok_or("`action.commands` must be a list of strings")?
        .iter()
        .map(|c| {
            c.as_str()
                .ok_or("`action.commands` must be a list of strings")
        })
        .collect::<Result<_, _>>()?;
    if commands.iter().all(|c| c.trim().is_empty()) {
        return Err("`action.commands` holds no command".into());
    }
    // One script, one line per command: the rules and the read-only
    // judgement parse it as the compound command it is.
    let mut input = json!({"command": commands.join("\n")});
    if let Some(ms) = action.get("timeout_ms").and_then(Value::as_u64) {
        input["timeout"] = json!(ms);
    }
    Ok(input)
}

fn local_shell(item: &Value) -> Result<Value, String> {
    let action = item
        .get("action")
        .ok_or("a `local_shell_call` without `action`")?;
    let argv: Vec<&str> = action
        .get("command")
        .and_then(Value::as_array)
        .ok_or("`action.command` must be a list of strings")?
        .iter()
        .map(|c| {
            c.as_str()
                .ok_or("`action.command` must be a list of strings")
        })
        .collect::<Result<_, _>>()?;
    if argv.is_empty() {
        return Err("`action.command` is empty".into());
    }
    if action
        .get("user")
        .and_then(Value::as_str)
        .is_some_and(|u| !u.is_empty())
    {
        return Err("running a command as another `user` is not supported".into());
    }
    let mut words: Vec<String> = Vec::new();
    if let Some(env) = action.get("env").and_then(Value::as_object) {
        for (k, v) in env {
            let ok = !k.is_empty()
                && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !k.starts_with(|c: char| c.is_ascii_digit());
            let Some(v) = v.as_str().filter(|_| ok) else {
                return Err(format!("`action.env` has an invalid entry `{k}`"));
            };
            words.push(format!("{k}={}", quote(v)));
        }
    }
    words.extend(argv.iter().map(|a| quote(a)));
    let mut command = words.join(" ");
    if let Some(dir) = action.get("working_directory").and_then(Value::as_str) {
        command = format!("cd {} && {command}", quote(dir));
    }
    let mut input = json!({"command": command});
    if let Some(ms) = action.get("timeout_ms").and_then(Value::as_u64) {
        input["timeout"] = json!(ms);
    }
    Ok(input)
}

/// POSIX single quoting; plain words stay as they are so rules read them.
pub(crate) fn quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The V4A operation as a patch in codex's language, which the
/// `apply_patch` tool reads.
fn patch(item: &Value) -> Result<String, String> {
    let op = item
        .get("operation")
        .ok_or("an `apply_patch_call` without `operation`")?;
    let path = op
        .get("path")
        .and_then(Value::as_str)
        .filter(|p| !p.trim().is_empty() && !p.contains('\n'))
        .ok_or("`operation.path` must be a non-empty path")?;
    let diff = || {
        op.get("diff")
            .and_then(Value::as_str)
            .ok_or("`operation.diff` must be a string")
    };
    let mut text = String::from("*** Begin Patch\n");
    match op.get("type").and_then(Value::as_str) {
        Some("create_file") => {
            text.push_str(&format!("*** Add File: {path}\n"));
            for line in diff()?.lines() {
                // V4A create diffs prefix every line with `+`; a bare line
                // is taken as content too.
                let line = line.strip_prefix('+').unwrap_or(line);
                text.push_str(&format!("+{line}\n"));
            }
        }
        Some("update_file") => {
            text.push_str(&format!("*** Update File: {path}\n"));
            for line in diff()?.lines() {
                if line.starts_with("*** ") && !line.starts_with("*** End of File") {
                    return Err(format!(
                        "a V4A diff line may not start with `*** `: {line:?}"
                    ));
                }
                text.push_str(line);
                text.push('\n');
            }
        }
        Some("delete_file") => text.push_str(&format!("*** Delete File: {path}\n")),
        other => return Err(format!("unknown `operation.type` {other:?}")),
    }
    text.push_str("*** End Patch\n");
    Ok(text)
}

/// A freeform call: the tool gets the text as its `input` property (the
/// JSON form of the same tool on Chat Completions takes the same shape).
fn custom(item: &Value) -> Result<Value, String> {
    item.get("name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .ok_or("a `custom_tool_call` without a `name`")?;
    let input = item
        .get("input")
        .and_then(Value::as_str)
        .ok_or("a `custom_tool_call`'s `input` must be a string")?;
    Ok(json!({"input": input}))
}

/// The output item answering `result`, for a call that came as an item of
/// type `kind` (`item` is that call item, for its limits).
pub fn answer(kind: &str, item: &Value, result: &CallResult) -> Option<Value> {
    let id = &result.call_id;
    let text = result.text();
    Some(match kind {
        "shell_call" => {
            let response = result.response.as_ref();
            let stdout = response
                .and_then(|r| r.get("stdout"))
                .and_then(Value::as_str)
                .map_or_else(|| text.clone(), str::to_string);
            let timed_out = response
                .and_then(|r| r.get("timedOut"))
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let code = response
                .and_then(|r| r.get("exitCode"))
                .and_then(Value::as_i64)
                .unwrap_or(if result.is_error { 1 } else { 0 });
            // A call refused before it ran (rules, hooks, bad input) has no
            // stdout: its reason goes to stderr.
            let (stdout, stderr) = if response.is_none() {
                (String::new(), text)
            } else {
                (stdout, String::new())
            };
            let limit = item
                .pointer("/action/max_output_length")
                .and_then(Value::as_u64)
                .and_then(|n| usize::try_from(n).ok());
            let (stdout, stderr) = cut(stdout, stderr, limit);
            let outcome = if timed_out {
                json!({"type": "timeout"})
            } else {
                json!({"type": "exit", "exit_code": code})
            };
            let mut out = json!({
                "type": "shell_call_output",
                "call_id": id,
                "output": [{"stdout": stdout, "stderr": stderr, "outcome": outcome}],
            });
            if let Some(n) = limit {
                out["max_output_length"] = json!(n);
            }
            out
        }
        "local_shell_call" => json!({
            "type": "local_shell_call_output",
            "id": id,
            "output": json!({
                "output": text,
                "metadata": {"exit_code": exit_code(result)},
            }).to_string(),
        }),
        "apply_patch_call" => json!({
            "type": "apply_patch_call_output",
            "call_id": id,
            "status": if result.is_error { "failed" } else { "completed" },
            "output": text,
        }),
        "custom_tool_call" => {
            let mut out = super::message::output_item(result);
            out["type"] = json!("custom_tool_call_output");
            out
        }
        _ => return None,
    })
}

fn exit_code(result: &CallResult) -> i64 {
    result
        .response
        .as_ref()
        .and_then(|r| r.get("exitCode"))
        .and_then(Value::as_i64)
        .unwrap_or(if result.is_error { 1 } else { 0 })
}

/// Both streams within `limit` characters together (stdout first), as the
/// model asked with `max_output_length`.
fn cut(stdout: String, stderr: String, limit: Option<usize>) -> (String, String) {
    let Some(limit) = limit else {
        return (stdout, stderr);
    };
    let keep_out: String = stdout.chars().take(limit).collect();
    let left = limit - keep_out.chars().count();
    let keep_err: String = stderr.chars().take(left).collect();
    (keep_out, keep_err)
}
