//! Codex's tool set: the names and schemas codex models are trained on,
//! over the same tools underneath.
//!
//! The set is a translation at the wire: a request carries codex's
//! definitions (`shell`, `shell_command`, `apply_patch`, `update_plan`,
//! `view_image`, and `exec_command`/`write_stdin` where the pool has
//! interactive sessions), and each call coming back is turned into the call
//! of the tool that does the work (`shell` → `Bash`, `update_plan` →
//! `TodoWrite`, `view_image` → `Read`) before it enters the pipeline. So
//! `Bash(...)` rules, the read-only judgement, hooks matching `Bash` and the
//! sandbox treat a codex command exactly as a Claude Code one; a patch is
//! judged as an edit of each path it names (the `apply_patch` tool).

use serde_json::{json, Value};

use super::openai_responses::native;
use super::WireFormat;
use baton_tool::call::ToolUse;
use baton_tool::pool::ToolPool;

/// Which tool names and schemas requests carry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolSet {
    /// Claude Code's (the pool's own definitions).
    #[default]
    Claude,
    /// Codex's (this module).
    Codex,
}

impl std::str::FromStr for ToolSet {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "claude" | "claude-code" | "default" => Ok(ToolSet::Claude),
            "codex" => Ok(ToolSet::Codex),
            other => Err(format!(
                "unknown tool set `{other}` (expected claude or codex)"
            )),
        }
    }
}

/// The Lark grammar OpenAI constrains a freeform `apply_patch` call with
/// (the patch language the `apply_patch` tool reads).
pub const APPLY_PATCH_GRAMMAR: &str = r#"start: begin_patch hunk+ end_patch
begin_patch: "*** Begin Patch" LF
end_patch: "*** End Patch" LF?

hunk: add_hunk | delete_hunk | update_hunk
add_hunk: "*** Add File: " filename LF add_line+
delete_hunk: "*** Delete File: " filename LF
update_hunk: "*** Update File: " filename LF change_move? change?

filename: /(.+)/
add_line: "+" /(.*)/ LF -> line

change_move: "*** Move to: " filename LF
change: (change_context | change_line)+ eof_line?
change_context: ("@@" | "@@ " /(.+)/) LF
change_line: ("+" | "-" | " ") /(.*)/ LF
eof_line: "*** End of File" LF

%import common.LF
"#;

/// Claude Code tools the codex set replaces or does not offer: their
/// definitions are left out of a codex request.
pub const REPLACED: [&str; 10] = [
    "Bash",
    "Read",
    "Edit",
    "Write",
    "NotebookEdit",
    "TodoWrite",
    "Glob",
    "Grep",
    "TaskOutput",
    "TaskStop",
];

/// The interactive-session tools, offered under their own names when the
/// pool has them (they are codex's names already).
pub const SESSION_TOOLS: [&str; 2] = ["exec_command", "write_stdin"];

const SHELL: &str = "Runs a command given as argv and returns its output. Most commands should be \
prefixed with [\"bash\", \"-lc\"]. Always set `workdir`; do not use `cd` unless necessary.";
const SHELL_COMMAND: &str = "Runs a shell script in the user's default shell and returns its \
output. Always set `workdir`; do not use `cd` unless necessary.";
const APPLY_PATCH: &str = "Edits files with a patch: `*** Begin Patch`, then per file `*** Add \
File: <path>` (lines prefixed `+`), `*** Delete File: <path>` or `*** Update File: <path>` \
(optionally `*** Move to: <path>`) with `@@` hunks of ` ` context, `-` removed and `+` added \
lines, then `*** End Patch`. Applies entirely or not at all.";
const UPDATE_PLAN: &str = "Updates the task plan. Give the steps with their status; at most one \
step is in_progress.";
const VIEW_IMAGE: &str = "Attaches a local image (by filesystem path) to the conversation.";

fn schemas() -> [(&'static str, &'static str, Value, &'static str); 5] {
    let workdir =
        json!({"type": "string", "description": "The working directory to run the command in"});
    let timeout =
        json!({"type": "number", "description": "The timeout for the command in milliseconds"});
    [
        (
            "shell",
            SHELL,
            json!({"type": "object", "properties": {
                "command": {"type": "array", "items": {"type": "string"}, "description": "The command to execute"},
                "workdir": workdir, "timeout_ms": timeout,
                "justification": {"type": "string", "description": "Why the command is needed"}},
                "required": ["command"], "additionalProperties": false}),
            "Bash",
        ),
        (
            "shell_command",
            SHELL_COMMAND,
            json!({"type": "object", "properties": {
                "command": {"type": "string", "description": "The shell script to execute"},
                "workdir": workdir, "timeout_ms": timeout,
                "justification": {"type": "string", "description": "Why the command is needed"}},
                "required": ["command"], "additionalProperties": false}),
            "Bash",
        ),
        (
            "apply_patch",
            APPLY_PATCH,
            json!({"type": "object", "properties": {
                "input": {"type": "string", "description": "The entire contents of the apply_patch command"}},
                "required": ["input"], "additionalProperties": false}),
            "apply_patch",
        ),
        (
            "update_plan",
            UPDATE_PLAN,
            json!({"type": "object", "properties": {
                "explanation": {"type": "string"},
                "plan": {"type": "array", "description": "The list of steps", "items": {
                    "type": "object", "properties": {
                        "step": {"type": "string"},
                        "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]}},
                    "required": ["step", "status"], "additionalProperties": false}}},
                "required": ["plan"], "additionalProperties": false}),
            "TodoWrite",
        ),
        (
            "view_image",
            VIEW_IMAGE,
            json!({"type": "object", "properties": {
                "path": {"type": "string", "description": "Local filesystem path to an image file"}},
                "required": ["path"], "additionalProperties": false}),
            "Read",
        ),
    ]
}

/// Codex's definitions in `format`, for the tools `pool` has underneath
/// (no `shell` without Bash, …). `apply_patch` is a freeform grammar tool
/// on Responses and a JSON tool elsewhere.
pub fn definitions(pool: &ToolPool, format: WireFormat) -> Vec<Value> {
    let mut out = Vec::new();
    let own = schemas().into_iter();
    // codex's interactive-session tools are Baton tools of the same names
    // and schemas (tools/src/exec/): deferred in the Claude set, loaded up
    // front here, as codex offers them.
    let sessions = SESSION_TOOLS.iter().filter_map(|name| {
        let tool = pool.get(name)?;
        Some((
            *name,
            tool.def().description(),
            tool.input_schema().clone(),
            *name,
        ))
    });
    for (name, description, schema, under) in own.chain(sessions) {
        if pool.get(under).is_none() {
            continue;
        }
        out.push(match format {
            WireFormat::OpenAiResponses if name == "apply_patch" => json!({
                "type": "custom", "name": name, "description": description,
                "format": {"type": "grammar", "syntax": "lark", "definition": APPLY_PATCH_GRAMMAR},
            }),
            WireFormat::OpenAiResponses => json!({
                "type": "function", "name": name, "description": description,
                "parameters": schema, "strict": false,
            }),
            WireFormat::OpenAiChat => json!({"type": "function", "function": {
                "name": name, "description": description, "parameters": schema, "strict": false}}),
            _ => json!({"name": name, "description": description, "input_schema": schema}),
        });
    }
    out
}

/// A request's tool list in the codex set: the pool's definitions without
/// the ones [`REPLACED`], then codex's. Session tools (and MCP tools, and
/// anything else) keep the definitions the wire layer gave them.
pub fn request_definitions(pool: &ToolPool, format: WireFormat, tools: Vec<Value>) -> Vec<Value> {
    let name = |d: &Value| {
        d.get("name")
            .or_else(|| d.pointer("/function/name"))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let mut codex = definitions(pool, format);
    let own: Vec<String> = codex.iter().filter_map(name).collect();
    // The pool's own `apply_patch` definition gives way to codex's (a
    // grammar tool on Responses): one definition per name.
    let mut kept: Vec<Value> = tools
        .into_iter()
        .filter(|d| !name(d).is_some_and(|n| REPLACED.contains(&n.as_str()) || own.contains(&n)))
        .collect();
    codex.append(&mut kept);
    codex
}

/// The call of the tool underneath a codex call; other calls unchanged.
/// Input that does not fit becomes the call's input error.
pub fn translate(call: ToolUse) -> ToolUse {
    let translated = match call.name.as_str() {
        "shell" => shell(&call.input).map(|i| ("Bash", i)),
        "shell_command" => shell_command(&call.input).map(|i| ("Bash", i)),
        "update_plan" => update_plan(&call.input).map(|i| ("TodoWrite", i)),
        "view_image" => match call.input.get("path").and_then(Value::as_str) {
            Some(p) => Ok(("Read", json!({"file_path": p}))),
            None => Err("`path` must be a string".to_string()),
        },
        _ => return call,
    };
    match translated {
        Ok((name, input)) => ToolUse {
            name: name.into(),
            input,
            ..call
        },
        Err(reason) => ToolUse {
            input_error: Some(reason),
            ..call
        },
    }
}

fn with_limits(input: &Value, command: String) -> Value {
    let command = match input.get("workdir").and_then(Value::as_str) {
        Some(dir) if !dir.is_empty() => format!("cd {} && {command}", native::quote(dir)),
        _ => command,
    };
    let mut out = json!({"command": command});
    if let Some(ms) = input.get("timeout_ms").and_then(Value::as_u64) {
        out["timeout"] = json!(ms);
    }
    out
}

fn shell(input: &Value) -> Result<Value, String> {
    let argv: Vec<&str> = input
        .get("command")
        .and_then(Value::as_array)
        .ok_or("`command` must be a list of strings")?
        .iter()
        .map(|a| a.as_str().ok_or("`command` must be a list of strings"))
        .collect::<Result<_, _>>()?;
    // `["bash", "-lc", script]` is how codex models write a script: the
    // script is the command the rules should read.
    let command = match argv.as_slice() {
        [] => return Err("`command` is empty".into()),
        [sh, flag, script] if is_shell(sh) && matches!(*flag, "-lc" | "-c") => script.to_string(),
        words => words
            .iter()
            .map(|w| native::quote(w))
            .collect::<Vec<_>>()
            .join(" "),
    };
    Ok(with_limits(input, command))
}

fn is_shell(word: &str) -> bool {
    matches!(
        word.rsplit('/').next().unwrap_or(word),
        "bash" | "sh" | "zsh"
    )
}

fn shell_command(input: &Value) -> Result<Value, String> {
    let command = input
        .get("command")
        .and_then(Value::as_str)
        .filter(|c| !c.trim().is_empty())
        .ok_or("`command` must be a non-empty string")?;
    Ok(with_limits(input, command.to_string()))
}

fn update_plan(input: &Value) -> Result<Value, String> {
    let plan = input
        .get("plan")
        .and_then(Value::as_array)
        .ok_or("`plan` must be a list of steps")?;
    let todos = plan
        .iter()
        .map(|s| {
            let step = s
                .get("step")
                .and_then(Value::as_str)
                .ok_or("each step needs a `step` string")?;
            let status = s
                .get("status")
                .and_then(Value::as_str)
                .ok_or("each step needs a `status`")?;
            Ok(json!({"content": step, "status": status, "activeForm": step}))
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(json!({"todos": todos}))
}
