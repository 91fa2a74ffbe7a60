//! How a call of another tool set appears to hooks: under the Claude Code
//! name and fields that users' matchers and scripts were written for.
//!
//! A hook guarding `Bash` commands (matcher `Bash`, a script that reads
//! `tool_input.command` and often checks `tool_name == "Bash"`) must see
//! codex's `exec_command` as a Bash command, or a model given codex's tools
//! walks around it. Likewise a guard on `Edit` or `Write` (reading
//! `tool_input.file_path`) must see every file a patch touches. The tool
//! says which job it does ([`ToolKind`], in its definition); the engine
//! never decides it from the name. So:
//!
//! - a shell tool ([`ToolKind::Shell`]) is presented as `Bash`, its input
//!   with `command` (the command text) added beside its own fields;
//! - a patch ([`ToolKind::Patch`]) is presented as `Edit` **once per path it
//!   writes**, with `file_path` (absolute) added beside the patch's own
//!   fields: a guard that looks at one path per call sees each of them, and
//!   the strictest answer wins, as it does for the permission rules;
//! - the real name goes along in the `baton_tool_name` field, and matchers
//!   naming it still select the call.
//!
//! Matching (`matching::ToolNameMatcher`) selects a call by its real name
//! or any Claude Code name of the same job (`aliases::claude_code_names`).

use serde_json::{Map, Value};

use baton_tool::tool::ToolKind;

/// The hook input field that carries the real tool name when the call is
/// presented under a Claude Code name.
pub const REAL_NAME_FIELD: &str = "baton_tool_name";

/// Claude Code's name for a tool that runs shell commands.
const SHELL_VIEW: &str = "Bash";
/// Claude Code's name for a tool that edits a file.
const PATCH_VIEW: &str = "Edit";

/// One presentation of a call.
#[derive(Clone, Debug, PartialEq)]
pub struct View {
    /// The name hooks see (a Claude Code name where Baton's differs).
    pub tool_name: String,
    /// The input hooks see, in that tool's shape.
    pub tool_input: Value,
    /// The path this view stands for (a patch's per-path views).
    pub path: Option<String>,
}

/// The views of a call to `name`, of `kind`, with `input`; `paths` gives
/// the files the call writes (asked only for a patch). One view, unchanged,
/// for a tool that does no other tool's job.
pub fn views(
    name: &str,
    kind: ToolKind,
    input: &Value,
    paths: impl FnOnce() -> Vec<String>,
) -> Vec<View> {
    match kind {
        ToolKind::Shell { .. } => {
            let mut shown = object(input);
            if let Some(command) = kind.command_text(input) {
                shown.insert("command".into(), Value::String(command));
            }
            vec![View {
                tool_name: SHELL_VIEW.into(),
                tool_input: Value::Object(shown),
                path: None,
            }]
        }
        ToolKind::Patch => {
            let paths = paths();
            if paths.is_empty() {
                // A patch that names no file (it will fail validation or do
                // nothing): still shown once, so guards see it.
                return vec![View {
                    tool_name: PATCH_VIEW.into(),
                    tool_input: input.clone(),
                    path: None,
                }];
            }
            paths
                .into_iter()
                .map(|path| {
                    let mut shown = object(input);
                    shown.insert("file_path".into(), Value::String(path.clone()));
                    View {
                        tool_name: PATCH_VIEW.into(),
                        tool_input: Value::Object(shown),
                        path: Some(path),
                    }
                })
                .collect()
        }
        _ => vec![View {
            tool_name: name.to_string(),
            tool_input: input.clone(),
            path: None,
        }],
    }
}

fn object(input: &Value) -> Map<String, Value> {
    input.as_object().cloned().unwrap_or_default()
}

/// A hook's `updatedInput` for `view` of a call to `name` (of `kind`), as
/// the tool's own input: the fields the view added are taken out again,
/// and a changed `command` goes back into the shell tool's own command
/// field. An error when the change cannot be carried back (a patch view's
/// `file_path` changed, a command that is not text): the caller refuses
/// the call rather than run something other than what the hook approved.
pub fn unpresent(name: &str, kind: ToolKind, view: &View, updated: Value) -> Result<Value, String> {
    if view.tool_name == name {
        return Ok(updated);
    }
    let Value::Object(mut fields) = updated else {
        return Err(format!(
            "a hook's updatedInput for {name} (shown as {}) is not an object",
            view.tool_name
        ));
    };
    match kind {
        ToolKind::Patch => {
            let path = fields.remove("file_path");
            if path.as_ref().and_then(Value::as_str) != view.path.as_deref() {
                return Err(format!(
                    "a hook changed file_path of a {name} call shown as Edit; a patch is \
                     rewritten through its own fields, not its paths"
                ));
            }
        }
        ToolKind::Shell { command: own } => {
            let shown = view.tool_input.get("command");
            let command = fields.remove("command");
            if command.as_ref() != shown {
                match command {
                    Some(Value::String(text)) => {
                        fields.insert(own.into(), Value::String(text));
                    }
                    _ => {
                        return Err(format!(
                            "a hook's rewritten command cannot be carried back to {name}: it is \
                             not text"
                        ))
                    }
                }
            } else if own == "command" {
                // The view's `command` is the tool's own field.
                if let Some(command) = command {
                    fields.insert(own.into(), command);
                }
            }
        }
        _ => {}
    }
    Ok(Value::Object(fields))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const EXEC: ToolKind = ToolKind::Shell { command: "cmd" };

    #[test]
    fn shell_tools_are_bash_and_patches_are_edits_per_path() {
        let v = views(
            "exec_command",
            EXEC,
            &json!({"cmd": "ls", "tty": true}),
            Vec::new,
        );
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].tool_name, "Bash");
        assert_eq!(
            v[0].tool_input,
            json!({"cmd": "ls", "tty": true, "command": "ls"})
        );
        let patch = json!({"input": "*** Begin Patch\n..."});
        let v = views("apply_patch", ToolKind::Patch, &patch, || {
            vec!["/w/a".into(), "/w/b".into()]
        });
        assert_eq!(v.len(), 2);
        assert_eq!(v[1].tool_name, "Edit");
        assert_eq!(v[1].tool_input["file_path"], "/w/b");
        assert_eq!(v[1].tool_input["input"], patch["input"]);
        // The kind decides, not the name: a tool that declares none is
        // shown as itself, whatever it is called.
        let v = views(
            "exec_command",
            ToolKind::Own,
            &json!({"cmd": "ls"}),
            Vec::new,
        );
        assert_eq!(v[0].tool_name, "exec_command");
        let v = views("Read", ToolKind::Own, &json!({"file_path": "/x"}), Vec::new);
        assert_eq!(v[0].tool_name, "Read");
    }

    #[test]
    fn rewrites_are_carried_back_or_refused() {
        let orig = json!({"cmd": "ls"});
        let v = &views("exec_command", EXEC, &orig, Vec::new)[0];
        let back = unpresent(
            "exec_command",
            EXEC,
            v,
            json!({"cmd": "ls", "command": "ls -a"}),
        );
        assert_eq!(back, Ok(json!({"cmd": "ls -a"})));
        let same = unpresent("exec_command", EXEC, v, v.tool_input.clone());
        assert_eq!(same, Ok(json!({"cmd": "ls"})));
        let argv = json!({"cmd": "ls", "command": ["rm", "-rf", "/"]});
        assert!(unpresent("exec_command", EXEC, v, argv).is_err());
        let bash = ToolKind::Shell { command: "command" };
        let orig = json!({"command": "ls"});
        let v = &views("run_shell", bash, &orig, Vec::new)[0];
        assert_eq!(
            unpresent("run_shell", bash, v, json!({"command": "ls -a"})),
            Ok(json!({"command": "ls -a"}))
        );
        assert_eq!(
            unpresent("run_shell", bash, v, v.tool_input.clone()),
            Ok(orig)
        );
        let patch = json!({"input": "p"});
        let p = &views("apply_patch", ToolKind::Patch, &patch, || {
            vec!["/w/a".into()]
        })[0];
        let moved = json!({"input": "p", "file_path": "/w/other"});
        assert!(unpresent("apply_patch", ToolKind::Patch, p, moved).is_err());
        let kept = json!({"input": "q", "file_path": "/w/a"});
        assert_eq!(
            unpresent("apply_patch", ToolKind::Patch, p, kept),
            Ok(json!({"input": "q"}))
        );
    }
}
