//! The structured view of a command line that the rest of Baton reasons about.
//!
//! These types are deliberately plain data, detached from the tree-sitter
//! tree: a permission rule or the read-only classifier should not have to know
//! the grammar's node names, and the values can outlive the parse.

use std::ops::Range;

/// One word of a command (its name or an argument), as written and, when it
/// contains no expansion, as bash would see it after quote removal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Word {
    pub(crate) source: String,
    pub(crate) value: Option<String>,
    pub(crate) glob: bool,
    /// Holds an unquoted expansion, so bash may split it into several
    /// words (`$x` with `x='-v a'` is two arguments).
    pub(crate) split: bool,
}

impl Word {
    /// A word bash passes as it is written (a keyword such as `[[`).
    pub(crate) fn plain(text: &str) -> Word {
        Word {
            source: text.to_string(),
            value: Some(text.to_string()),
            glob: false,
            split: false,
        }
    }

    /// The word exactly as written, quotes included.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The word after quote removal, or `None` when its value depends on
    /// run-time state (a variable, a command substitution, arithmetic).
    pub fn literal(&self) -> Option<&str> {
        self.value.as_deref()
    }

    /// Contains unquoted pattern characters (`*`, `?`, `[`, `{a,b}`), so
    /// bash may turn it into other words, chosen by the files on disk.
    pub fn is_glob(&self) -> bool {
        self.glob
    }

    /// Holds an unquoted expansion: bash may split it into several words.
    pub fn may_split(&self) -> bool {
        self.split
    }

    /// The literal value, when it is one that bash will pass unchanged.
    pub fn fixed(&self) -> Option<&str> {
        if self.glob {
            None
        } else {
            self.literal()
        }
    }
}

/// A redirection such as `> out`, `2>&1`, `< in`, `<<EOF`, `<<< text`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Redirect {
    /// The explicit file descriptor (`2` in `2>x`), if any.
    pub fd: Option<u32>,
    /// The operator: `>`, `>>`, `<`, `&>`, `>&`, `<&`, `>|`, `<>`, `&>>`,
    /// `<<`, `<<-`, `<<<`.
    pub op: String,
    /// The target word (file name, descriptor number, here-string text);
    /// `None` for here-documents.
    pub target: Option<Word>,
}

impl Redirect {
    /// Writes to something other than a descriptor or a null/standard device.
    /// (Which descriptors a command may duplicate depends on the
    /// redirections before it: see [`uses_inherited_descriptor`].)
    pub fn writes_file(&self) -> bool {
        match self.op.as_str() {
            "<" | "<<" | "<<-" | "<<<" => false,
            "<&" | ">&" => match self.target.as_ref().and_then(Word::fixed) {
                Some(t) => !(t == "-" || t.chars().all(|c| c.is_ascii_digit()) || harmless_sink(t)),
                None => true,
            },
            ">" | ">>" | "&>" | "&>>" | ">|" => !self
                .target
                .as_ref()
                .and_then(Word::fixed)
                .is_some_and(harmless_sink),
            // `<>` opens read-write; anything unknown is treated as a write.
            _ => true,
        }
    }
}

/// Whether a redirection of a command duplicates a descriptor above 2
/// that no earlier redirection of the same command opened (`>&7`, `<&7`,
/// `2>&7`, `3>&7`): one the shell inherited, which may lead anywhere (a
/// host's log file, a socket). Redirections apply left to right, so
/// `ls 3>&1 1>&2 2>&3` uses only what it opened and `echo x >&3 3>f` does
/// not. Redirections of an enclosing compound command (`{ …; } 3>f`) are
/// not counted as opened for the commands inside: judged as inherited.
pub(crate) fn uses_inherited_descriptor(redirects: &[Redirect]) -> bool {
    let mut opened: Vec<u32> = Vec::new();
    for r in redirects {
        let closes = matches!(r.op.as_str(), "<&-" | ">&-")
            || (matches!(r.op.as_str(), "<&" | ">&")
                && r.target.as_ref().and_then(Word::fixed) == Some("-"));
        if closes {
            // `3>&-` closes 3: a later `>&3` fails; counted as not opened.
            if let Some(fd) = r.fd {
                opened.retain(|&o| o != fd);
            }
            continue;
        }
        if matches!(r.op.as_str(), "<&" | ">&") {
            match r.target.as_ref().and_then(Word::fixed) {
                Some(t) if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) => {
                    match t.parse::<u32>() {
                        Ok(n) if n <= 2 || opened.contains(&n) => {}
                        _ => return true,
                    }
                }
                // A file name (`>&file`), a move (`>&3-`) or an expansion:
                // judged as a write by `writes_file`.
                _ => {}
            }
        }
        if let Some(fd) = r.fd.filter(|&fd| fd > 2) {
            if !opened.contains(&fd) {
                opened.push(fd);
            }
        }
    }
    false
}

fn harmless_sink(target: &str) -> bool {
    matches!(target, "/dev/null" | "/dev/stdout" | "/dev/stderr")
}

/// Where a command sits in the line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Part of the command line itself (possibly inside a list, pipeline,
    /// subshell, loop or conditional).
    Direct,
    /// Inside `$(...)`, backquotes or `<(...)`/`>(...)`: it runs to produce
    /// a word or a file for another command.
    Substitution,
}

/// One simple command: `NAME=value name arg... redirections`, or a test
/// (`[[ ... ]]`) or declaration (`export`, `local`, `unset`), which are
/// named after their keyword.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimpleCommand {
    pub(crate) text: String,
    pub(crate) span: Range<usize>,
    pub(crate) assignments: Vec<String>,
    pub(crate) words: Vec<Word>,
    pub(crate) redirects: Vec<Redirect>,
    pub(crate) placement: Placement,
}

impl SimpleCommand {
    /// The source text of this command, redirections and prefix
    /// assignments included.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Byte range of [`text`](Self::text) in the parsed string.
    pub fn span(&self) -> Range<usize> {
        self.span.clone()
    }

    /// The command words as written, joined by single spaces, without prefix
    /// assignments and redirections: what a `Bash(prefix:*)` rule compares.
    pub fn command_line(&self) -> String {
        let parts: Vec<&str> = self.words.iter().map(Word::source).collect();
        parts.join(" ")
    }

    /// The command's name when it is a fixed word (`None` for `$CMD args`
    /// or a line made only of assignments).
    pub fn name(&self) -> Option<&str> {
        self.words.first().and_then(Word::fixed)
    }

    /// Name and arguments.
    pub fn words(&self) -> &[Word] {
        &self.words
    }

    /// Arguments only.
    pub fn args(&self) -> &[Word] {
        self.words.get(1..).unwrap_or(&[])
    }

    /// `NAME=value` prefixes, as written.
    pub fn assignments(&self) -> &[String] {
        &self.assignments
    }

    /// Redirections attached to this command itself (not to an enclosing
    /// compound command; those are in [`Script::redirects`]).
    pub fn redirects(&self) -> &[Redirect] {
        &self.redirects
    }

    /// Whether the command runs as part of the line itself or inside a
    /// substitution that produces a word or file for another command.
    pub fn placement(&self) -> Placement {
        self.placement
    }
}

/// A construct that changes what later commands do, so a line using it is
/// never read-only even if every command in it is harmless.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Construct {
    /// `f() { ... }`: a name on the allowlist could be redefined.
    FunctionDefinition,
    /// A shell variable is set (`X=1`, `for PATH in`, `${X:=v}`, `$((X=1))`):
    /// `PATH`, `IFS` or `BASH_ENV` change what commands run.
    Assignment(String),
    /// A node kind the classifier does not know; failing closed.
    Unsupported(String),
    /// Nested deeper than the classifier follows.
    TooDeep,
}

/// A parsed command line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Script {
    pub(crate) commands: Vec<SimpleCommand>,
    pub(crate) redirects: Vec<Redirect>,
    pub(crate) constructs: Vec<Construct>,
}

impl Script {
    /// Every simple command, in source order, including those inside
    /// substitutions, loops and conditionals.
    pub fn commands(&self) -> &[SimpleCommand] {
        &self.commands
    }

    /// Every redirection anywhere in the line, including those applied to
    /// compound commands (`{ ls; } > out`).
    pub fn redirects(&self) -> &[Redirect] {
        &self.redirects
    }

    /// Constructs that rule out read-only classification.
    pub fn constructs(&self) -> &[Construct] {
        &self.constructs
    }

    /// The simple commands, giving up the rest of the parse.
    pub fn into_commands(self) -> Vec<SimpleCommand> {
        self.commands
    }
}
