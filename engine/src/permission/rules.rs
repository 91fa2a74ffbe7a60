//! Permission rules: `Tool` or `Tool(specifier)`, as in Claude Code settings.
//!
//! A rule is parsed once, when the settings are loaded, into a tool matcher
//! and a typed specifier (command, path, domain). Anything malformed is an
//! error naming the rule, never a rule that silently matches everything or
//! nothing: a deny rule that quietly fails to parse is a hole.
//!
//! The specifier's kind follows the tool: `Bash` takes commands, the file
//! tools take gitignore-style paths, `WebFetch` takes `domain:`. Other tools
//! (a host's own) take a wildcard pattern matched against whatever the tool
//! reports as its target, with command semantics when that is a command.

use std::fmt;
use std::path::{Path, PathBuf};

use super::bash::CommandPattern;
use super::mcp::ToolMatcher;
use super::paths::PathPattern;
use super::web::DomainPattern;
use super::{FileAccess, PermissionTarget};

/// Which list a rule is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RuleKind {
    /// `permissions.allow`: matching calls run without asking.
    Allow,
    /// `permissions.ask`: matching calls need approval.
    Ask,
    /// `permissions.deny`: matching calls never run.
    Deny,
}

impl RuleKind {
    /// The list's name in settings (`allow`, `ask`, `deny`).
    pub fn as_str(self) -> &'static str {
        match self {
            RuleKind::Allow => "allow",
            RuleKind::Ask => "ask",
            RuleKind::Deny => "deny",
        }
    }
}

/// Tools whose specifier is a path pattern.
pub const FILE_TOOLS: &[&str] = &[
    "Read",
    "Edit",
    "Write",
    "MultiEdit",
    "NotebookEdit",
    "NotebookRead",
    "Glob",
    "Grep",
    "LS",
];

#[derive(Clone, Debug)]
pub(crate) enum Specifier {
    Command(CommandPattern),
    Path(PathPattern),
    Domain(DomainPattern),
    /// A host tool's specifier: wildcard text (command semantics for commands).
    Other(CommandPattern),
}

/// One parsed rule.
#[derive(Clone, Debug)]
pub struct Rule {
    text: String,
    kind: RuleKind,
    source: Option<PathBuf>,
    pub(crate) tool: ToolMatcher,
    pub(crate) spec: Option<Specifier>,
}

/// A rule that could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleError {
    /// The settings file the rule is in; `None` for rules given in code.
    pub source: Option<PathBuf>,
    /// The list the rule is in.
    pub kind: RuleKind,
    /// The rule as written.
    pub rule: String,
    /// What is wrong with it.
    pub message: String,
}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(source) = &self.source {
            write!(f, "{}: ", source.display())?;
        }
        write!(
            f,
            "permissions.{} rule `{}`: {}",
            self.kind.as_str(),
            self.rule,
            self.message
        )
    }
}

impl std::error::Error for RuleError {}

impl Rule {
    /// Parses `text`. `home` anchors `~/` paths; `project` anchors `/` paths.
    pub fn parse(
        text: &str,
        kind: RuleKind,
        home: Option<&Path>,
        project: &Path,
    ) -> Result<Rule, RuleError> {
        let error = |message: String| RuleError {
            source: None,
            kind,
            rule: text.to_string(),
            message,
        };
        let trimmed = text.trim();
        let (name, inner) = split_rule(trimmed).map_err(error)?;
        let tool = ToolMatcher::parse(name).map_err(error)?;
        let spec = match inner {
            None => None,
            Some(inner) => {
                if tool.is_mcp() {
                    return Err(error(
                        "MCP rules take no specifier: use `mcp__server`, `mcp__server__tool` or `mcp__server__*`".into(),
                    ));
                }
                Some(parse_specifier(name, inner, home, project).map_err(error)?)
            }
        };
        Ok(Rule {
            text: trimmed.to_string(),
            kind,
            source: None,
            tool,
            spec,
        })
    }

    /// The same rule, remembering the file it came from (for messages).
    pub fn with_source(mut self, source: impl Into<PathBuf>) -> Rule {
        self.source = Some(source.into());
        self
    }

    /// The same rule, shown as `text` (the entry as the user wrote it, when
    /// a legacy spelling was read as this rule).
    pub(crate) fn shown_as(mut self, text: &str) -> Rule {
        self.text = text.trim().to_string();
        self
    }

    /// The rule as the user wrote it.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The list the rule is in.
    pub fn kind(&self) -> RuleKind {
        self.kind
    }

    /// The settings file the rule came from; `None` for rules given in
    /// code or added during the session.
    pub fn source(&self) -> Option<&Path> {
        self.source.as_deref()
    }

    /// "the deny rule `Bash(rm:*)` (from /p/.claude/settings.json)".
    pub fn describe(&self) -> String {
        let mut text = format!("the {} rule `{}`", self.kind.as_str(), self.text);
        if let Some(source) = &self.source {
            text.push_str(&format!(" (from {})", source.display()));
        }
        text
    }

    /// Whether the rule applies to this tool at all. `Read` and `Edit` rules
    /// also cover every tool that reads or writes files, and `Bash` rules
    /// every tool that runs a shell command (`exec_command`, `Monitor`): a
    /// deny rule must not be walked around by naming another shell tool.
    pub(crate) fn covers_tool(&self, tool_name: &str, target: &PermissionTarget) -> bool {
        if self.tool.matches(tool_name) {
            return true;
        }
        matches!(
            (self.tool.exact(), target),
            (Some("Bash"), PermissionTarget::Command(_))
                | (
                    Some("Read"),
                    PermissionTarget::Path {
                        access: FileAccess::Read,
                        ..
                    }
                )
                | (
                    Some("Edit"),
                    PermissionTarget::Path {
                        access: FileAccess::Write,
                        ..
                    }
                )
        )
    }

    /// No specifier, or one that matches everything (`Bash(*)`).
    pub(crate) fn is_whole_tool(&self) -> bool {
        match &self.spec {
            None => true,
            Some(Specifier::Command(p)) | Some(Specifier::Other(p)) => p.is_any(),
            Some(_) => false,
        }
    }

    /// Whether this rule names the whole of `tool_name` (used to drop a
    /// denied tool from the pool).
    pub fn names_whole_tool(&self, tool_name: &str) -> bool {
        self.is_whole_tool() && self.tool.matches(tool_name)
    }
}

/// `Name` or `Name(inner)`, with balanced parentheses inside.
fn split_rule(text: &str) -> Result<(&str, Option<&str>), String> {
    if text.is_empty() {
        return Err("empty rule".into());
    }
    let Some(open) = text.find('(') else {
        if text.contains(')') {
            return Err("unbalanced parentheses: `)` without `(`".into());
        }
        return Ok((text, None));
    };
    let Some(inner) = text[open + 1..].strip_suffix(')') else {
        return Err(
            "unbalanced parentheses: a rule looks like `Tool` or `Tool(specifier)` and must end with `)`"
                .into(),
        );
    };
    check_balanced(inner)?;
    if inner.trim().is_empty() {
        return Err(format!(
            "empty specifier; write `{}` to name the whole tool",
            &text[..open]
        ));
    }
    Ok((text[..open].trim_end(), Some(inner)))
}

/// Parentheses outside quotes must pair up, so that `Bash(a) || (b)` is an
/// error rather than a rule for the command `a) || (b`.
fn check_balanced(inner: &str) -> Result<(), String> {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in inner.chars() {
        if escaped {
            escaped = false;
            continue;
        }
        match (quote, c) {
            (_, '\\') if quote != Some('\'') => escaped = true,
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') => {
                depth = depth
                    .checked_sub(1)
                    .ok_or("unbalanced parentheses: `)` closes nothing")?;
            }
            (None, _) => {}
        }
    }
    if depth != 0 {
        return Err("unbalanced parentheses: a `(` is never closed".into());
    }
    Ok(())
}

fn parse_specifier(
    tool: &str,
    inner: &str,
    home: Option<&Path>,
    project: &Path,
) -> Result<Specifier, String> {
    if tool == "Bash" {
        CommandPattern::parse(inner).map(Specifier::Command)
    } else if FILE_TOOLS.contains(&tool) {
        PathPattern::parse(inner, home, project).map(Specifier::Path)
    } else if tool == "WebFetch" {
        DomainPattern::parse(inner).map(Specifier::Domain)
    } else {
        CommandPattern::parse(inner).map(Specifier::Other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Rule, RuleError> {
        Rule::parse(text, RuleKind::Deny, Some(Path::new("/h")), Path::new("/p"))
    }

    #[test]
    fn rule_shapes() {
        assert!(parse("Bash").unwrap().is_whole_tool());
        assert!(parse("Bash(*)").unwrap().is_whole_tool());
        assert!(!parse("Bash(npm test)").unwrap().is_whole_tool());
        assert!(matches!(
            parse("Edit(src/**)").unwrap().spec,
            Some(Specifier::Path(_))
        ));
        assert!(matches!(
            parse("WebFetch(domain:a.com)").unwrap().spec,
            Some(Specifier::Domain(_))
        ));
        assert!(parse("mcp__srv__*")
            .unwrap()
            .names_whole_tool("mcp__srv__x"));
        assert!(parse("Bash(echo \"(\")").is_ok());
    }

    #[test]
    fn malformed_rules_name_the_problem() {
        for bad in [
            "Bash(npm test",
            "Bash)",
            "Bash(a) || (b)",
            "Bash(a))",
            "Bash()",
            "",
            "Read(src/[a)",
            "WebFetch(https://x.com)",
            "mcp__srv(x)",
            "Ba sh",
        ] {
            let err = parse(bad).unwrap_err();
            assert_eq!(err.rule, bad);
            assert!(!err.message.is_empty(), "{bad}");
        }
        let err = parse("Bash(npm test").unwrap_err().with_source("/p/s.json");
        assert!(err.to_string().contains("/p/s.json"));
        assert!(err.to_string().contains("Bash(npm test"));
    }

    impl RuleError {
        fn with_source(mut self, s: &str) -> RuleError {
            self.source = Some(PathBuf::from(s));
            self
        }
    }
}
