//! Reading the rule entries real settings files hold that the strict parser
//! refuses: old spellings (`Bash:*`, `Edit:src/**`), wildcard specifiers on
//! tools without one (`WebFetch(*)`), paths with `..`, and plain mistakes.
//!
//! One bad entry must not stop Baton from running, nor drop the file's other
//! rules: each entry is judged alone. Where an entry cannot be read as
//! written, the reading never widens what the user allowed:
//!
//! - an allow entry that cannot be read is skipped (it allows nothing, which
//!   is also what Claude Code does with a rule it cannot match);
//! - a deny or ask entry that names a tool is read as covering that whole
//!   tool if its specifier cannot be read, because a deny rule that quietly
//!   matches nothing is a hole;
//! - an entry that names no tool at all is skipped.
//!
//! Every reading other than the exact one comes with a warning naming the
//! entry, so the user can fix the file.

use std::path::Path;

use super::rules::{Rule, RuleKind};

/// What became of an entry the strict parser refused.
pub(crate) enum Reading {
    /// Read as this rule; the warning (if any) says how.
    Rule(Box<Rule>, Option<String>),
    /// Skipped, for this reason.
    Skipped(String),
}

/// Reads `text`, which [`Rule::parse`] refused with `error`.
pub(crate) fn read(
    text: &str,
    kind: RuleKind,
    home: Option<&Path>,
    project: &Path,
    error: &str,
) -> Reading {
    let trimmed = text.trim();
    let parse = |t: &str| Rule::parse(t, kind, home, project).ok();
    // `Tool(*)`, `Tool(**)`: the whole tool, whatever its specifier kind.
    if let Some((name, inner)) = call_form(trimmed) {
        if matches!(inner.trim(), "*" | "**") {
            if let Some(rule) = parse(name) {
                return Reading::Rule(Box::new(rule.shown_as(trimmed)), None);
            }
        }
        // `Read(../shared/**)`: relative to the project, as an absolute rule.
        if inner.trim_start().starts_with("..") || inner.trim_start().starts_with("./..") {
            let joined = baton_tool::paths::normalize(&project.join(inner.trim()));
            if let Some(rule) = parse(&format!("{name}(/{})", joined.display())) {
                return Reading::Rule(
                    Box::new(rule.shown_as(trimmed)),
                    Some(format!(
                        "`{trimmed}` read as the absolute path `{}`",
                        joined.display()
                    )),
                );
            }
        }
    }
    // `Tool:spec`, an old spelling.
    if let Some((name, spec)) = colon_form(trimmed) {
        if kind == RuleKind::Allow {
            return Reading::Skipped(format!(
                "`{trimmed}` is an old spelling that Claude Code no longer applies, so it allows nothing; write `{name}` (the whole tool) or `{name}(…)`"
            ));
        }
        let spec = spec.trim();
        let (rule, how) = if matches!(spec, "" | "*" | "**") {
            (parse(name), format!("the whole tool `{name}`"))
        } else {
            match parse(&format!("{name}({spec})")) {
                Some(rule) => (Some(rule), format!("`{name}({spec})`")),
                None => (parse(name), format!("the whole tool `{name}`, to be safe")),
            }
        };
        if let Some(rule) = rule {
            return Reading::Rule(
                Box::new(rule.shown_as(trimmed)),
                Some(format!("`{trimmed}` is an old spelling; read as {how}")),
            );
        }
    }
    // A tool name followed by a specifier that cannot be read (a bad glob,
    // unbalanced parentheses).
    let named = trimmed
        .split_once('(')
        .map(|(name, _)| name.trim_end())
        .filter(|name| tool_like(name));
    if let Some(name) = named {
        if let Some(whole) = parse(name) {
            return match kind {
                RuleKind::Allow => Reading::Skipped(format!(
                    "`{trimmed}` cannot be read ({error}), so it allows nothing"
                )),
                RuleKind::Ask | RuleKind::Deny => Reading::Rule(
                    Box::new(whole.shown_as(trimmed)),
                    Some(format!(
                        "`{trimmed}` cannot be read ({error}); as a {} rule it covers the whole tool `{name}`, to be safe",
                        kind.as_str()
                    )),
                ),
            };
        }
    }
    Reading::Skipped(format!(
        "`{trimmed}` is not a rule ({error}), so it is ignored"
    ))
}

/// `Name(inner)` with a plausible tool name.
fn call_form(text: &str) -> Option<(&str, &str)> {
    let open = text.find('(')?;
    let inner = text[open + 1..].strip_suffix(')')?;
    let name = text[..open].trim_end();
    tool_like(name).then_some((name, inner))
}

/// `Name:spec` with a tool name that starts with an upper-case letter (the
/// built-in tools' spelling), as in `Bash:npm test`.
fn colon_form(text: &str) -> Option<(&str, &str)> {
    let (name, spec) = text.split_once(':')?;
    let name = name.trim();
    (tool_like(name) && name.starts_with(|c: char| c.is_ascii_uppercase()) && !name.contains('('))
        .then_some((name, spec))
}

fn tool_like(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(text: &str, kind: RuleKind) -> Reading {
        let error = Rule::parse(text, kind, None, Path::new("/p"))
            .err()
            .map(|e| e.message)
            .unwrap_or_default();
        read(text, kind, None, Path::new("/p"), &error)
    }

    fn rule(text: &str, kind: RuleKind) -> Rule {
        match reading(text, kind) {
            Reading::Rule(rule, _) => *rule,
            Reading::Skipped(why) => panic!("{text} skipped: {why}"),
        }
    }

    #[test]
    fn wildcards_name_the_whole_tool() {
        for kind in [RuleKind::Allow, RuleKind::Ask, RuleKind::Deny] {
            let r = rule("WebFetch(*)", kind);
            assert!(r.names_whole_tool("WebFetch"));
            assert_eq!(r.text(), "WebFetch(*)");
        }
    }

    #[test]
    fn old_spellings_never_allow_but_still_deny() {
        assert!(matches!(
            reading("Bash:*", RuleKind::Allow),
            Reading::Skipped(_)
        ));
        assert!(matches!(
            reading("Edit:*", RuleKind::Allow),
            Reading::Skipped(_)
        ));
        assert!(rule("Bash:*", RuleKind::Deny).names_whole_tool("Bash"));
        let r = rule("Bash:rm -rf *", RuleKind::Deny);
        assert!(!r.is_whole_tool());
        assert_eq!(r.text(), "Bash:rm -rf *");
    }

    #[test]
    fn unreadable_specifiers_fail_closed() {
        assert!(matches!(
            reading("Read(src/[a)", RuleKind::Allow),
            Reading::Skipped(_)
        ));
        assert!(rule("Read(src/[a)", RuleKind::Deny).names_whole_tool("Read"));
        assert!(rule("WebFetch(https://x.com)", RuleKind::Ask).names_whole_tool("WebFetch"));
        assert!(matches!(
            reading("Ba sh", RuleKind::Deny),
            Reading::Skipped(_)
        ));
        assert!(matches!(reading("", RuleKind::Deny), Reading::Skipped(_)));
    }

    #[test]
    fn parent_paths_are_read_against_the_project() {
        let r = rule("Read(../shared/**)", RuleKind::Deny);
        assert!(!r.is_whole_tool());
    }
}
