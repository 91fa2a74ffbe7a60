//! The `hooks` section of a settings file (SPEC §12):
//!
//! ```json
//! "hooks": { "PreToolUse": [ { "matcher": "Bash|Edit",
//!     "hooks": [ { "type": "command", "command": "…", "timeout": 30 } ] } ] }
//! ```
//!
//! A user's settings often configure events and hook types Baton does not
//! run (`SessionStart`, `Stop`, `"type": "prompt"`…). Those are skipped with
//! a warning so the file still loads; what Baton would run but cannot
//! understand (a bad regex, a missing command, a bad timeout) is an error.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::command::{CommandHook, ToolNameMatcher, DEFAULT_HOOK_TIMEOUT};
use super::{Hook, HookEvent};

/// What a `hooks` section yielded.
#[derive(Default)]
pub struct ParsedHooks {
    pub hooks: Vec<Arc<dyn Hook>>,
    pub errors: Vec<String>,
    pub warnings: Vec<String>,
}

fn event_named(name: &str) -> Option<HookEvent> {
    [
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::PostToolUseFailure,
    ]
    .into_iter()
    .find(|e| e.as_str() == name)
}

/// Parses a `hooks` value; `project_dir` becomes `CLAUDE_PROJECT_DIR`.
pub fn parse_hooks(value: &Value, project_dir: &Path) -> ParsedHooks {
    let mut parsed = ParsedHooks::default();
    let Some(events) = value.as_object() else {
        parsed
            .errors
            .push("`hooks` must be an object keyed by event name".into());
        return parsed;
    };
    for (name, groups) in events {
        let Some(event) = event_named(name) else {
            parsed.warnings.push(format!(
                "hooks.{name}: Baton runs only PreToolUse, PostToolUse and PostToolUseFailure hooks; these were skipped"
            ));
            continue;
        };
        let Some(groups) = groups.as_array() else {
            parsed
                .errors
                .push(format!("hooks.{name} must be an array of matcher groups"));
            continue;
        };
        for (i, group) in groups.iter().enumerate() {
            parse_group(
                event,
                &format!("hooks.{name}[{i}]"),
                group,
                project_dir,
                &mut parsed,
            );
        }
    }
    parsed
}

fn parse_group(
    event: HookEvent,
    at: &str,
    group: &Value,
    project_dir: &Path,
    parsed: &mut ParsedHooks,
) {
    let Some(group) = group.as_object() else {
        parsed
            .errors
            .push(format!("{at} must be an object with `matcher` and `hooks`"));
        return;
    };
    let matcher = match group.get("matcher") {
        None | Some(Value::Null) => ToolNameMatcher::All,
        Some(Value::String(text)) => match ToolNameMatcher::parse(text) {
            Ok(m) => m,
            Err(e) => return parsed.errors.push(format!("{at}.matcher: {e}")),
        },
        Some(_) => return parsed.errors.push(format!("{at}.matcher must be a string")),
    };
    let Some(hooks) = group.get("hooks").and_then(Value::as_array) else {
        parsed
            .errors
            .push(format!("{at}.hooks must be an array of hooks"));
        return;
    };
    for (j, hook) in hooks.iter().enumerate() {
        let at = format!("{at}.hooks[{j}]");
        match parse_hook(event, hook, &matcher, project_dir) {
            Ok(Some(hook)) => parsed.hooks.push(Arc::new(hook)),
            Ok(None) => parsed.warnings.push(format!(
                "{at}: only hooks of type \"command\" are run by Baton; this one was skipped"
            )),
            Err(e) => parsed.errors.push(format!("{at}: {e}")),
        }
    }
}

fn parse_hook(
    event: HookEvent,
    hook: &Value,
    matcher: &ToolNameMatcher,
    project_dir: &Path,
) -> Result<Option<CommandHook>, String> {
    let Some(hook) = hook.as_object() else {
        return Err("a hook must be an object with `type` and `command`".into());
    };
    match hook.get("type").and_then(Value::as_str) {
        Some("command") => {}
        Some(_) => return Ok(None),
        None => return Err("`type` is missing (use \"command\")".into()),
    }
    let command = match hook.get("command") {
        Some(Value::String(c)) if !c.trim().is_empty() => c.clone(),
        _ => return Err("`command` must be a non-empty string".into()),
    };
    let timeout = match hook.get("timeout") {
        None | Some(Value::Null) => DEFAULT_HOOK_TIMEOUT,
        Some(Value::Number(n)) => match n.as_f64() {
            Some(secs) if secs > 0.0 && secs.is_finite() && secs < 1e9 => {
                Duration::from_secs_f64(secs)
            }
            _ => {
                return Err(format!(
                    "`timeout` must be a positive number of seconds, not {n}"
                ))
            }
        },
        Some(other) => {
            return Err(format!(
                "`timeout` must be a number of seconds, not {other}"
            ))
        }
    };
    Ok(Some(
        CommandHook::new(event, matcher.clone(), command, project_dir).with_timeout(timeout),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_commands_and_reports_problems() {
        let parsed = parse_hooks(
            &json!({
                "PreToolUse": [
                    {"matcher": "Bash", "hooks": [{"type": "command", "command": "true", "timeout": 5}]},
                    {"matcher": "", "hooks": [{"type": "prompt", "prompt": "x"}]},
                    {"matcher": "Bash(", "hooks": [{"type": "command", "command": "true"}]}
                ],
                "PostToolUse": [{"hooks": [{"type": "command", "command": ""}]}],
                "Stop": [{"hooks": [{"type": "command", "command": "true"}]}]
            }),
            Path::new("/p"),
        );
        assert_eq!(parsed.hooks.len(), 1);
        assert!(parsed.hooks[0].matches(HookEvent::PreToolUse, "Bash"));
        assert!(!parsed.hooks[0].matches(HookEvent::PreToolUse, "Bashful"));
        assert!(!parsed.hooks[0].matches(HookEvent::PostToolUse, "Bash"));
        assert_eq!(parsed.errors.len(), 2, "{:?}", parsed.errors);
        assert!(
            parsed.errors[0].contains("PostToolUse") || parsed.errors[1].contains("PostToolUse")
        );
        assert_eq!(parsed.warnings.len(), 2, "{:?}", parsed.warnings);
    }
}
