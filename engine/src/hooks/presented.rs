//! How a call of another tool set appears to hooks: under the Claude Code
//! name and fields that users' matchers and scripts were written for.
//!
//! A hook guarding `Bash` commands (matcher `Bash`, a script that reads
//! `tool_input.command` and often checks `tool_name == "Bash"`) must see
//! codex's `exec_command`, `shell` and `shell_command` as Bash commands, or
//! a model given codex's tools walks around it. Likewise a guard on `Edit`
//! or `Write` (reading `tool_input.file_path`) must see every file a patch
//! touches. So:
//!
//! - a shell tool is presented as `Bash`, its input with `command` (the
//!   command text) added beside its own fields;
//! - `apply_patch` is presented as `Edit` **once per path it names**, with
//!   `file_path` (absolute) added beside the patch's own `input`: a guard
//!   that looks at one path per call sees each of them, and the strictest
//!   answer wins, as it does for the permission rules;
//! - the real name goes along in the `baton_tool_name` field, and matchers
//!   naming it still select the call.
//!
//! Matching (`matching::ToolNameMatcher`) selects a call by its real name
//! or any Claude Code name of the same job (`aliases::claude_code_names`).

use serde_json::{Map, Value};

use baton_tool::aliases::{claude_code_names, shell_command_text};

/// The hook input field that carries the real tool name when the call is
/// presented under a Claude Code name.
pub const REAL_NAME_FIELD: &str = "baton_tool_name";

/// One presentation of a call.
#[derive(Clone, Debug, PartialEq)]
pub struct View {
    /// The name hooks see (a Claude Code name where Baton's differs).
    pub tool_name: String,
    /// The input hooks see, in that tool's shape.
    pub tool_input: Value,
    /// The path this view stands for (`apply_patch`'s per-path views).
    pub path: Option<String>,
}

/// The views of a call to `name` with `input`; `paths` gives the files the
/// call writes (asked only for a patch). One view, unchanged, for tools
/// that are Claude Code's own.
pub fn views(name: &str, input: &Value, paths: impl FnOnce() -> Vec<String>) -> Vec<View> {
    let names = claude_code_names(name);
    if names.contains(&"Bash") {
        let mut shown = object(input);
        if let Some(command) = shell_command_text(name, input) {
            shown.insert("command".into(), Value::String(command));
        }
        return vec![View {
            tool_name: "Bash".into(),
            tool_input: Value::Object(shown),
            path: None,
        }];
    }
    if names.contains(&"Edit") {
        let paths = paths();
        if paths.is_empty() {
            // A patch that names no file (it will fail validation or do
            // nothing): still shown once, so guards see it.
            return vec![View {
                tool_name: "Edit".into(),
                tool_input: input.clone(),
                path: None,
            }];
        }
        return paths
            .into_iter()
            .map(|path| {
                let mut shown = object(input);
                shown.insert("file_path".into(), Value::String(path.clone()));
                View {
                    tool_name: "Edit".into(),
                    tool_input: Value::Object(shown),
                    path: Some(path),
                }
            })
            .collect();
    }
    vec![View {
        tool_name: name.to_string(),
        tool_input: input.clone(),
        path: None,
    }]
}

fn object(input: &Value) -> Map<String, Value> {
    input.as_object().cloned().unwrap_or_default()
}

/// A hook's `updatedInput` for `view` of a call to `name`, as the tool's
/// own input: the fields the view added are taken out again, and a changed
/// `command` becomes `exec_command`'s `cmd`. An error when the change
/// cannot be carried back (a patch view's `file_path` changed, a shell
/// argv rewritten as text): the caller refuses the call rather than run
/// something other than what the hook approved.
pub fn unpresent(
    name: &str,
    original: &Value,
    view: &View,
    updated: Value,
) -> Result<Value, String> {
    if view.tool_name == name {
        return Ok(updated);
    }
    let Value::Object(mut fields) = updated else {
        return Err(format!(
            "a hook's updatedInput for {name} (shown as {}) is not an object",
            view.tool_name
        ));
    };
    match name {
        "apply_patch" => {
            let path = fields.remove("file_path");
            if path.as_ref().and_then(Value::as_str) != view.path.as_deref() {
                return Err(
                    "a hook changed file_path of an apply_patch call shown as Edit; \
                            a patch is rewritten through its `input`, not its paths"
                        .to_string(),
                );
            }
        }
        _ => {
            let shown = view.tool_input.get("command");
            let command = fields.remove("command");
            if command.as_ref() != shown {
                match (name, command) {
                    ("exec_command", Some(Value::String(text))) => {
                        fields.insert("cmd".into(), Value::String(text));
                    }
                    ("shell_command", Some(text)) => {
                        fields.insert("command".into(), text);
                    }
                    _ => {
                        return Err(format!(
                            "a hook's rewritten command cannot be carried back to {name}"
                        ))
                    }
                }
            } else if name == "shell_command" {
                if let Some(command) = command {
                    fields.insert("command".into(), command);
                }
            } else if name == "shell" {
                // `shell`'s own `command` is its argv, which the view
                // replaced by text: put the original back.
                if let Some(argv) = original.get("command") {
                    fields.insert("command".into(), argv.clone());
                }
            }
        }
    }
    Ok(Value::Object(fields))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shell_tools_are_bash_and_patches_are_edits_per_path() {
        let v = views("exec_command", &json!({"cmd": "ls", "tty": true}), Vec::new);
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].tool_name, "Bash");
        assert_eq!(
            v[0].tool_input,
            json!({"cmd": "ls", "tty": true, "command": "ls"})
        );
        let patch = json!({"input": "*** Begin Patch\n..."});
        let v = views("apply_patch", &patch, || vec!["/w/a".into(), "/w/b".into()]);
        assert_eq!(v.len(), 2);
        assert_eq!(v[1].tool_input["file_path"], "/w/b");
        assert_eq!(v[1].tool_input["input"], patch["input"]);
        let v = views("Read", &json!({"file_path": "/x"}), Vec::new);
        assert_eq!(v[0].tool_name, "Read");
    }

    #[test]
    fn rewrites_are_carried_back_or_refused() {
        let orig = json!({"cmd": "ls"});
        let v = &views("exec_command", &orig, Vec::new)[0];
        let back = unpresent(
            "exec_command",
            &orig,
            v,
            json!({"cmd": "ls", "command": "ls -a"}),
        );
        assert_eq!(back, Ok(json!({"cmd": "ls -a"})));
        let same = unpresent("exec_command", &orig, v, v.tool_input.clone());
        assert_eq!(same, Ok(json!({"cmd": "ls"})));
        let argv = json!({"command": ["bash", "-lc", "ls"]});
        let v = &views("shell", &argv, Vec::new)[0];
        assert_eq!(
            unpresent("shell", &argv, v, v.tool_input.clone()),
            Ok(argv.clone())
        );
        let text = json!({"command": "rm -rf /"});
        assert!(unpresent("shell", &argv, v, text).is_err());
        let patch = json!({"input": "p"});
        let p = &views("apply_patch", &patch, || vec!["/w/a".into()])[0];
        let moved = json!({"input": "p", "file_path": "/w/other"});
        assert!(unpresent("apply_patch", &patch, p, moved).is_err());
        let kept = json!({"input": "q", "file_path": "/w/a"});
        assert_eq!(
            unpresent("apply_patch", &patch, p, kept),
            Ok(json!({"input": "q"}))
        );
    }
}
