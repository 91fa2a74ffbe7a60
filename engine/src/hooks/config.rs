//! The `hooks` section of a settings file (SPEC §12):
//!
//! ```json
//! "hooks": { "PreToolUse": [ { "matcher": "Bash|Edit",
//!     "hooks": [ { "type": "command", "command": "…", "timeout": 30 } ] } ] }
//! ```
//!
//! One bad entry never costs the others: a hook Baton cannot understand
//! (a bad regex, a missing command, an unknown type) is skipped with one
//! warning naming the entry, and every valid hook of the file still loads.
//! A user whose deny-guard is skipped reads why; a user whose whole file is
//! rejected loses every guard at once. Events Baton does not fire get one
//! warning per event and file.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use super::events::EventSupport;
use super::handlers::command::{CommandForm, CommandHandler, HookEnv, ShellKind};
use super::handlers::host::{ModelHandler, ModelHookKind, ModelHookSlot};
use super::handlers::http::HttpHandler;
use super::handlers::mcp_tool::{McpToolHandler, McpToolSlot};
use super::handlers::{Configured, HookOptions};
use super::matching::{split_rule_matcher, IfFilter, ToolNameMatcher};
use super::protocol::OnFailure;
use super::{Hook, HookEvent};

/// What the hooks of one file need to know about where they come from.
#[derive(Clone, Debug, Default)]
pub struct HookSource {
    /// `CLAUDE_PROJECT_DIR`, the settings' `env`, a plugin's root.
    pub env: HookEnv,
    /// Anchors `~/` in `if:` rules.
    pub home: Option<PathBuf>,
    /// Where prompt and agent hooks find the host's model.
    pub models: ModelHookSlot,
    /// Where `mcp_tool` hooks find the host's MCP client.
    pub mcp: McpToolSlot,
}

/// What a `hooks` section yielded.
#[derive(Default)]
pub struct ParsedHooks {
    /// One hook per valid entry, in the order of the section.
    pub hooks: Vec<Arc<dyn Hook>>,
    /// Entries skipped, events not fired; each names where it is.
    pub warnings: Vec<String>,
}

// Not derived: hooks are trait objects; their number and the warnings say enough.
baton_tool::debug_fields! { ParsedHooks as this { hooks: this.hooks.len(), warnings } }

/// Parses a `hooks` value.
pub fn parse_hooks(value: &Value, source: &HookSource) -> ParsedHooks {
    let mut parsed = ParsedHooks::default();
    let Some(events) = value.as_object() else {
        parsed
            .warnings
            .push("`hooks` must be an object keyed by event name; it was ignored".into());
        return parsed;
    };
    for (name, groups) in events {
        let Some(event) = HookEvent::parse(name) else {
            parsed.warnings.push(format!(
                "hooks.{name}: Claude Code has no event of that name; its hooks were skipped"
            ));
            continue;
        };
        let Some(groups) = groups.as_array() else {
            parsed.warnings.push(format!(
                "hooks.{name} must be an array of matcher groups; it was skipped"
            ));
            continue;
        };
        let before = parsed.hooks.len();
        for (i, group) in groups.iter().enumerate() {
            parse_group(
                event,
                &format!("hooks.{name}[{i}]"),
                group,
                source,
                &mut parsed,
            );
        }
        let count = parsed.hooks.len() - before;
        if count == 0 {
            continue;
        }
        match event.support() {
            // Session events: `baton run`/`serve` fire them, library hosts
            // call Engine::session_start/session_end.
            EventSupport::Engine | EventSupport::Session => {}
            EventSupport::Host => parsed.warnings.push(format!(
                "hooks.{name}: {name} belongs to the host's model loop; Baton runs these {count} hook(s) only when the host fires the event (Engine::fire_hook, the serve `hook_event` line; `baton agent` fires UserPromptSubmit and Stop)"
            )),
            EventSupport::NotRun => {
                parsed.hooks.truncate(before);
                parsed.warnings.push(format!(
                    "hooks.{name}: Baton never fires {name}; its {count} hook(s) were skipped"
                ));
            }
        }
    }
    parsed
}

fn parse_group(
    event: HookEvent,
    at: &str,
    group: &Value,
    source: &HookSource,
    parsed: &mut ParsedHooks,
) {
    let Some(group) = group.as_object() else {
        return parsed.warnings.push(format!(
            "{at} must be an object with `matcher` and `hooks`; it was skipped"
        ));
    };
    let mut filters = Vec::new();
    let matcher = match group.get("matcher") {
        None | Some(Value::Null) => ToolNameMatcher::All,
        Some(Value::String(text)) => {
            // `Write(*.py)`: the tool, and only the calls the rule covers.
            let parsed_matcher = match split_rule_matcher(text) {
                Some((names, rule)) => {
                    match IfFilter::parse(&rule, source.home.as_deref(), &source.env.project_dir) {
                        Ok(filter) => {
                            filters.push(filter);
                            ToolNameMatcher::parse(&names)
                        }
                        Err(e) => Err(e),
                    }
                }
                None => ToolNameMatcher::parse(text),
            };
            match parsed_matcher {
                Ok(m) => m,
                Err(e) => {
                    return parsed.warnings.push(format!(
                        "{at}.matcher: {e}; this group's hooks were skipped"
                    ))
                }
            }
        }
        Some(other) => {
            return parsed.warnings.push(format!(
                "{at}.matcher must be a string, not {other}; this group's hooks were skipped"
            ))
        }
    };
    let Some(hooks) = group.get("hooks").and_then(Value::as_array) else {
        return parsed.warnings.push(format!(
            "{at}.hooks must be an array of hooks; the group was skipped"
        ));
    };
    for (j, hook) in hooks.iter().enumerate() {
        let at = format!("{at}.hooks[{j}]");
        let mut options = HookOptions::new(event, matcher.clone());
        options.filters = filters.clone();
        match parse_hook(hook, options, source) {
            Ok(hook) => parsed.hooks.push(hook),
            Err(e) => parsed
                .warnings
                .push(format!("{at}: {e}; this hook was skipped")),
        }
    }
}

fn parse_hook(
    hook: &Value,
    mut options: HookOptions,
    source: &HookSource,
) -> Result<Arc<dyn Hook>, String> {
    let Some(hook) = hook.as_object() else {
        return Err("a hook must be an object with `type` and `command`".into());
    };
    let kind = hook.get("type").and_then(Value::as_str).unwrap_or("");
    options.timeout = default_timeout(kind);
    read_options(hook, &mut options, source)?;
    Ok(match kind {
        "command" => {
            let command = match hook.get("command") {
                Some(Value::String(c)) if !c.trim().is_empty() => c.clone(),
                _ => return Err("`command` must be a non-empty string".into()),
            };
            let form = match hook.get("args") {
                None | Some(Value::Null) => CommandForm::Shell {
                    command,
                    shell: match hook.get("shell").and_then(Value::as_str) {
                        None | Some("bash") => ShellKind::Bash,
                        Some("powershell") => ShellKind::PowerShell,
                        Some(other) => {
                            return Err(format!(
                                "`shell` must be \"bash\" or \"powershell\", not {other:?}"
                            ))
                        }
                    },
                },
                Some(Value::Array(items)) => CommandForm::Exec {
                    program: command,
                    args: items
                        .iter()
                        .map(|a| a.as_str().map(str::to_string))
                        .collect::<Option<Vec<_>>>()
                        .ok_or("`args` must be an array of strings")?,
                },
                Some(_) => return Err("`args` must be an array of strings".into()),
            };
            Arc::new(Configured::with_options(
                options,
                CommandHandler::new(form, source.env.clone()),
            ))
        }
        "http" => {
            let url = hook
                .get("url")
                .and_then(Value::as_str)
                .ok_or("`url` must be a string")?;
            let headers = string_map(hook.get("headers"), "headers")?;
            let allowed = string_list(hook.get("allowedEnvVars"), "allowedEnvVars")?;
            Arc::new(Configured::with_options(
                options,
                HttpHandler::new(url, &headers, &allowed, &source.env)?,
            ))
        }
        "prompt" | "agent" => {
            let prompt = hook
                .get("prompt")
                .and_then(Value::as_str)
                .filter(|p| !p.trim().is_empty())
                .ok_or("`prompt` must be a non-empty string")?;
            Arc::new(Configured::with_options(
                options,
                ModelHandler {
                    kind: if kind == "prompt" {
                        ModelHookKind::Prompt
                    } else {
                        ModelHookKind::Agent
                    },
                    prompt: prompt.to_string(),
                    model: hook
                        .get("model")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                    slot: source.models.clone(),
                },
            ))
        }
        "mcp_tool" => {
            let name = |key: &str| {
                hook.get(key)
                    .and_then(Value::as_str)
                    .filter(|s| !s.trim().is_empty())
                    .map(str::to_string)
                    .ok_or(format!("`{key}` must be a non-empty string"))
            };
            let input = match hook.get("input") {
                None | Some(Value::Null) => Map::new(),
                Some(Value::Object(map)) => map.clone(),
                Some(_) => return Err("`input` must be an object".into()),
            };
            Arc::new(Configured::with_options(
                options,
                McpToolHandler {
                    server: name("server")?,
                    tool: name("tool")?,
                    input,
                    slot: source.mcp.clone(),
                },
            ))
        }
        "" => return Err("`type` is missing (command, http, prompt, agent or mcp_tool)".into()),
        other => return Err(format!("unknown hook type {other:?}")),
    })
}

/// Claude Code's default timeout per handler type: 600 s for command hooks,
/// 30 s for prompt hooks, 60 s for agent hooks (its hooks reference; the
/// agent SDK's settings schema says 60 for agent hooks too). For http and
/// mcp_tool hooks neither states one; Baton uses the command hooks' 600 s
/// for http and 60 s (the agent default) for mcp_tool calls.
pub fn default_timeout(kind: &str) -> Duration {
    Duration::from_secs(match kind {
        "prompt" => 30,
        "agent" | "mcp_tool" => 60,
        _ => 600,
    })
}

fn read_options(
    hook: &Map<String, Value>,
    options: &mut HookOptions,
    source: &HookSource,
) -> Result<(), String> {
    match hook.get("timeout") {
        None | Some(Value::Null) => {}
        Some(Value::Number(n)) => match n.as_f64() {
            Some(secs) if secs > 0.0 && secs.is_finite() && secs < 1e9 => {
                options.timeout = Duration::from_secs_f64(secs)
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
    }
    match hook.get("if") {
        None | Some(Value::Null) => {}
        Some(Value::String(rule)) => options.filters.push(
            IfFilter::parse(rule, source.home.as_deref(), &source.env.project_dir)
                .map_err(|e| e.to_string())?,
        ),
        Some(other) => return Err(format!("`if` must be a permission rule, not {other}")),
    }
    options.once = flag(hook, "once")?;
    options.background = flag(hook, "async")? || flag(hook, "asyncRewake")?;
    options.on_failure = match hook.get("onFailure") {
        None | Some(Value::Null) => OnFailure::Continue,
        Some(Value::String(s)) if s == "continue" => OnFailure::Continue,
        // Claude Code reads any other value as "block": fail closed.
        Some(_) => OnFailure::Block,
    };
    Ok(())
}

fn flag(hook: &Map<String, Value>, key: &str) -> Result<bool, String> {
    match hook.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(format!("`{key}` must be true or false, not {other}")),
    }
}

fn string_map(value: Option<&Value>, key: &str) -> Result<Vec<(String, String)>, String> {
    match value {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| {
                v.as_str()
                    .map(|v| (k.clone(), v.to_string()))
                    .ok_or_else(|| format!("`{key}.{k}` must be a string"))
            })
            .collect(),
        Some(_) => Err(format!("`{key}` must be an object of strings")),
    }
}

fn string_list(value: Option<&Value>, key: &str) -> Result<Vec<String>, String> {
    match value {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| format!("`{key}` must be an array of strings")),
        Some(_) => Err(format!("`{key}` must be an array of strings")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bad_entries_are_skipped_one_by_one() {
        let parsed = parse_hooks(
            &json!({
                "PreToolUse": [
                    {"matcher": "Bash", "hooks": [{"type": "command", "command": "true", "timeout": 5}]},
                    {"matcher": "Bash(*)", "hooks": [{"type": "command", "command": "true"}]},
                    {"matcher": "Write(*.py)", "hooks": [{"type": "command", "command": "true"}]},
                    {"matcher": "Bash(", "hooks": [{"type": "command", "command": "true"}]},
                    {"matcher": "", "hooks": [{"type": "mcp_tool", "server": "s"}]}
                ],
                "PostToolUse": [{"hooks": [{"type": "command", "command": ""}, {"type": "command", "command": "true"}]}],
                "WorktreeCreate": [{"hooks": [{"type": "command", "command": "true"}]}],
                "Nonsense": []
            }),
            &HookSource::default(),
        );
        assert_eq!(parsed.hooks.len(), 4, "{:?}", parsed.warnings);
        let pre = |tool: &str| {
            parsed
                .hooks
                .iter()
                .filter(|h| h.matches(HookEvent::PreToolUse, tool))
                .count()
        };
        assert_eq!(pre("Bash"), 2);
        assert_eq!(pre("Bashful"), 0);
        assert_eq!(pre("Write"), 1);
        let w = parsed.warnings.join("\n");
        assert!(w.contains("hooks.PreToolUse[3].matcher"), "{w}");
        assert!(w.contains("hooks.PreToolUse[4].hooks[0]"), "{w}");
        assert!(w.contains("hooks.PostToolUse[0].hooks[0]"), "{w}");
        assert!(w.contains("WorktreeCreate"), "{w}");
        assert!(w.contains("Nonsense"), "{w}");
        assert_eq!(parsed.warnings.len(), 5, "{w}");
    }
}
