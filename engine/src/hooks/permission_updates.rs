//! Permission changes a PermissionRequest hook makes for the rest of the
//! session (`updatedPermissions`, Claude Code's `PermissionUpdate`): rules
//! added, replaced or removed, the mode set, directories added or removed.
//!
//! They live in the session's slots, so every later call of the session
//! sees them; the settings files are not touched (Baton does not persist a
//! hook's answer the way Claude Code's dialog can). Session rules are
//! consulted after the settings' rules: a settings deny still wins.

use std::path::{Path, PathBuf};

use parking_lot::RwLock;
use serde_json::Value;

use crate::permission::{
    PermissionDecision, PermissionMode, PermissionPolicy, PermissionRequest, Rule, RuleKind,
    RulePolicy,
};
use baton_tool::context::Context;
use baton_tool::session::Session;

/// The session's hook-made permission changes.
#[derive(Default, Debug)]
pub struct SessionPermissions {
    state: RwLock<State>,
}

#[derive(Default, Clone, Debug)]
struct State {
    rules: Vec<Rule>,
    mode: Option<PermissionMode>,
    added_dirs: Vec<PathBuf>,
    removed_dirs: Vec<PathBuf>,
}

impl SessionPermissions {
    /// The session's changes (created empty on first use).
    pub fn of(session: &Session) -> std::sync::Arc<SessionPermissions> {
        session.slots().get_or_default::<SessionPermissions>()
    }

    /// Whether anything was changed (the common case: nothing).
    pub fn is_empty(&self) -> bool {
        let s = self.state.read();
        s.rules.is_empty()
            && s.mode.is_none()
            && s.added_dirs.is_empty()
            && s.removed_dirs.is_empty()
    }

    /// `context` with the session's mode and directories applied.
    pub fn context(&self, context: &Context) -> Context {
        let s = self.state.read();
        let mut out = context.clone();
        if let Some(mode) = s.mode {
            out.permission_mode = mode;
        }
        if !s.added_dirs.is_empty() || !s.removed_dirs.is_empty() {
            let mut roots: Vec<PathBuf> = out
                .roots
                .iter()
                .filter(|r| !s.removed_dirs.contains(r))
                .cloned()
                .collect();
            for dir in &s.added_dirs {
                if !roots.contains(dir) {
                    roots.push(dir.clone());
                }
            }
            out.roots = std::sync::Arc::new(roots);
        }
        out
    }

    /// The mode a permission update set for the session, if any, removed
    /// so that the context's mode is the session's again (plan mode moves
    /// the mode through the context, in call order).
    pub fn take_mode(&self) -> Option<PermissionMode> {
        self.state.write().mode.take()
    }

    /// The session's rules, in the order they were added (a session's
    /// saved state keeps them; see baton's `session_state`).
    pub fn rules(&self) -> Vec<Rule> {
        self.state.read().rules.clone()
    }

    /// Adds rules parsed elsewhere (a resumed session's saved ones).
    pub fn add_rules(&self, rules: impl IntoIterator<Item = Rule>) {
        self.state.write().rules.extend(rules);
    }

    /// The session rules' decision, when one of them matches.
    pub fn decide(&self, request: &PermissionRequest<'_>) -> Option<PermissionDecision> {
        let s = self.state.read();
        if s.rules.is_empty() {
            return None;
        }
        let mut policy = RulePolicy::new();
        for rule in &s.rules {
            policy.push(rule.clone());
        }
        let mut probe_context = request.context.clone();
        probe_context.permission_mode = PermissionMode::Default;
        let probe = PermissionRequest {
            context: &probe_context,
            ..*request
        };
        match policy.decide(&probe) {
            PermissionDecision::Ask {
                source: crate::permission::AskSource::ModeDefault,
                ..
            } => None,
            decision => Some(decision),
        }
    }

    /// Applies Claude Code `PermissionUpdate` objects; returns a problem
    /// for each it could not apply.
    pub fn apply(&self, updates: &[Value], home: Option<&Path>, project: &Path) -> Vec<String> {
        let mut problems = Vec::new();
        let mut s = self.state.write();
        for update in updates {
            let kind = update.get("type").and_then(Value::as_str).unwrap_or("");
            match kind {
                "addRules" | "replaceRules" | "removeRules" => {
                    let behavior = match update.get("behavior").and_then(Value::as_str) {
                        Some("allow") => RuleKind::Allow,
                        Some("ask") => RuleKind::Ask,
                        Some("deny") => RuleKind::Deny,
                        other => {
                            problems.push(format!("{kind}: unknown behavior {other:?}"));
                            continue;
                        }
                    };
                    let mut rules = Vec::new();
                    for rule in update
                        .get("rules")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        let Some(tool) = rule.get("toolName").and_then(Value::as_str) else {
                            problems.push(format!("{kind}: a rule without toolName"));
                            continue;
                        };
                        let text = match rule.get("ruleContent").and_then(Value::as_str) {
                            Some(content) => format!("{tool}({content})"),
                            None => tool.to_string(),
                        };
                        match Rule::parse(&text, behavior, home, project) {
                            Ok(rule) => rules.push(rule),
                            Err(e) => {
                                problems.push(format!("{kind}: rule `{text}`: {}", e.message))
                            }
                        }
                    }
                    match kind {
                        "addRules" => s.rules.extend(rules),
                        "replaceRules" => {
                            s.rules.retain(|r| r.kind() != behavior);
                            s.rules.extend(rules);
                        }
                        _ => s.rules.retain(|r| {
                            r.kind() != behavior || !rules.iter().any(|x| x.text() == r.text())
                        }),
                    }
                }
                "setMode" => match update
                    .get("mode")
                    .and_then(Value::as_str)
                    .map(str::parse::<PermissionMode>)
                {
                    Some(Ok(mode)) => s.mode = Some(mode),
                    _ => problems.push("setMode: unknown mode".into()),
                },
                "addDirectories" | "removeDirectories" => {
                    for dir in update
                        .get("directories")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str)
                    {
                        let path = baton_tool::paths::normalize(&project.join(dir));
                        if kind == "addDirectories" {
                            s.removed_dirs.retain(|d| d != &path);
                            s.added_dirs.push(path);
                        } else {
                            s.added_dirs.retain(|d| d != &path);
                            s.removed_dirs.push(path);
                        }
                    }
                }
                other => problems.push(format!("unknown permission update type {other:?}")),
            }
        }
        problems
    }
}
