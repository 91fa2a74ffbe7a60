//! Which hooks an event reaches: the group's `matcher`, older tool names,
//! and `if:` filters in permission-rule syntax.
//!
//! Claude Code compares a matcher with the tool name as a regular
//! expression (anchored here, so `Edit` does not also select
//! `NotebookEdit`). Real settings files also write matchers in rule syntax
//! (`Bash(*)`, `Write(*.py)`); those are read as "this tool, and only calls
//! the rule matches", the same filter an `if:` field gives. Tools renamed
//! since a hook was written keep their hooks: a matcher naming `BashOutput`
//! still selects `TaskOutput`.

use std::path::Path;
use std::sync::Arc;

use regex::Regex;

use crate::permission::{
    AskSource, PermissionDecision, PermissionMode, PermissionPolicy, PermissionRequest, Rule,
    RuleError, RuleKind, RulePolicy,
};

/// A hook's `matcher` or `if:` that cannot be used; the settings loader
/// reports it and skips the hook.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MatcherError {
    /// The matcher is not a valid regular expression.
    #[error("matcher `{text}` is not a valid regular expression: {source}")]
    Regex {
        /// The matcher as written.
        text: String,
        /// The regex crate's reason.
        #[source]
        source: regex::Error,
    },
    /// The `if:` value (or a matcher in rule syntax) is not a permission rule.
    #[error("`{text}` is not a permission rule: {}", .source.message)]
    Rule {
        /// The value as written.
        text: String,
        /// Why the rule parser refused it.
        #[source]
        source: RuleError,
    },
}

// The alias table is shared with rules, calls and agent definitions.
pub use baton_tool::aliases::{canonical_tool_name, TOOL_ALIASES};

/// Which tools (or, for other events, which `source`/`trigger`…) a hook
/// wants: a regex matched against the whole name, or everything for `*`
/// and the empty matcher.
#[derive(Clone, Debug)]
pub enum ToolNameMatcher {
    /// `*` or empty: everything.
    All,
    /// A regular expression that must match the whole name.
    Pattern(Regex),
}

impl ToolNameMatcher {
    /// Reads a settings `matcher`; an error names the bad regex.
    pub fn parse(text: &str) -> Result<ToolNameMatcher, MatcherError> {
        let text = text.trim();
        if text.is_empty() || text == "*" {
            return Ok(ToolNameMatcher::All);
        }
        Regex::new(&format!("^(?:{text})$"))
            .map(ToolNameMatcher::Pattern)
            .map_err(|source| MatcherError::Regex {
                text: text.to_string(),
                source,
            })
    }

    /// Whether the hook wants `name`; a renamed tool also matches by its
    /// old name, and another tool set's tool by its Claude Code name.
    pub fn matches(&self, name: &str) -> bool {
        match self {
            ToolNameMatcher::All => true,
            ToolNameMatcher::Pattern(re) => {
                re.is_match(name)
                    || TOOL_ALIASES
                        .iter()
                        .any(|(old, new)| *new == name && re.is_match(old))
                    // Another set's tool doing a Claude Code tool's job
                    // (`exec_command` is `Bash`, see `presented`).
                    || baton_tool::aliases::claude_code_names(name)
                        .iter()
                        .any(|cc| re.is_match(cc))
            }
        }
    }
}

/// A matcher written in permission-rule syntax, split into the tool part
/// and the rule: `Write(*.py)` → (`Write`, `Write(*.py)`). `None` when the
/// text is not of that shape (a plain name or a regex).
pub fn split_rule_matcher(text: &str) -> Option<(String, String)> {
    let text = text.trim();
    let open = text.find('(')?;
    let name = &text[..open];
    if !text.ends_with(')')
        || name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '|')
    {
        return None;
    }
    Some((name.to_string(), text.to_string()))
}

/// An `if:` filter: permission-rule syntax, matched like a deny rule (so
/// a call the rule might cover runs the hook: for a guard, running too
/// often is the safe side).
#[derive(Clone, Debug)]
pub struct IfFilter {
    text: String,
    /// One rule per tool named (`Bash|Edit(x)` gives two).
    policy: Arc<RulePolicy>,
}

impl IfFilter {
    /// Reads an `if:` value (`Bash(git *)`, `Edit|Write(*.py)`); `home`
    /// and `project` anchor its paths as in permission rules.
    pub fn parse(
        text: &str,
        home: Option<&Path>,
        project: &Path,
    ) -> Result<IfFilter, MatcherError> {
        let mut policy = RulePolicy::new();
        let text = text.trim();
        let rules: Vec<String> = match split_rule_matcher(text) {
            Some((names, _)) if names.contains('|') => {
                let inner = &text[names.len()..];
                names.split('|').map(|n| format!("{n}{inner}")).collect()
            }
            _ => vec![text.to_string()],
        };
        for rule in rules {
            let rule = Rule::parse(&rule, RuleKind::Deny, home, project).map_err(|source| {
                MatcherError::Rule {
                    text: text.to_string(),
                    source,
                }
            })?;
            policy.push(rule);
        }
        Ok(IfFilter {
            text: text.to_string(),
            policy: Arc::new(policy),
        })
    }

    /// The filter as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether the rule covers this call.
    pub fn matches(&self, request: &PermissionRequest<'_>) -> bool {
        // Judged as if nothing but this rule applied: the session's mode
        // must not turn a non-match into a "deny" (plan mode denies writes).
        let mut context = request.context.clone();
        context.permission_mode = PermissionMode::BypassPermissions;
        let probe = PermissionRequest {
            context: &context,
            ..*request
        };
        // A rule-sourced question in bypass mode means the rule may match
        // but the command hides what it runs (`git -c alias.x=push x`,
        // `bash -c "$X"`): a guard hook must run then, not be skipped.
        matches!(
            self.policy.decide(&probe),
            PermissionDecision::Deny { .. }
                | PermissionDecision::Ask {
                    source: AskSource::Rule,
                    ..
                }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A matcher that is not a regex keeps the regex crate's error as its
    /// source; an `if:` that is not a rule keeps the rule parser's.
    #[test]
    fn bad_matchers_keep_their_cause() {
        let err = ToolNameMatcher::parse("Bash(").unwrap_err();
        assert!(err
            .to_string()
            .starts_with("matcher `Bash(` is not a valid regular expression"));
        let source = std::error::Error::source(&err).unwrap();
        assert!(source.downcast_ref::<regex::Error>().is_some());
        let err = IfFilter::parse("Bash(", None, Path::new("/p")).unwrap_err();
        assert!(matches!(err, MatcherError::Rule { .. }), "{err:?}");
        let source = std::error::Error::source(&err).unwrap();
        assert!(source.downcast_ref::<RuleError>().is_some());
    }

    #[test]
    fn aliases_and_rule_matchers() {
        let m = ToolNameMatcher::parse("BashOutput|KillShell").unwrap();
        assert!(m.matches("TaskOutput"));
        assert!(m.matches("TaskStop"));
        assert!(!m.matches("Bash"));
        let m = ToolNameMatcher::parse("Edit").unwrap();
        assert!(!m.matches("NotebookEdit"));
        assert_eq!(
            split_rule_matcher("Write(*.py)"),
            Some(("Write".into(), "Write(*.py)".into()))
        );
        assert_eq!(split_rule_matcher("Bash"), None);
        assert_eq!(split_rule_matcher("mcp__.*"), None);
        assert_eq!(split_rule_matcher("(Bash)"), None);
        assert_eq!(canonical_tool_name("LS"), "Glob");
        let bash = ToolNameMatcher::parse("Bash").unwrap();
        assert!(bash.matches("exec_command") && bash.matches("shell_command"));
        let edits = ToolNameMatcher::parse("Edit|Write").unwrap();
        assert!(edits.matches("apply_patch") && !edits.matches("exec_command"));
        assert!(ToolNameMatcher::parse("Write")
            .unwrap()
            .matches("apply_patch"));
    }
}
