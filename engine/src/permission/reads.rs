//! `Read(…)` deny rules for shell commands.
//!
//! A deny rule on reading `.env` means nothing if `cat .env` runs
//! unasked, and without a sandbox nothing stops the kernel from opening
//! the file. So every file a command line may open is found from its text
//! (the way the reach check finds them) and matched against the rules: a
//! covered file that will certainly be read is denied; a file that cannot
//! be known before the command runs makes the call ask.

use std::path::{Path, PathBuf};

use super::bash::CommandParts;
use super::paths::PathPattern;
use super::policy::path_suspected;
use super::reach::{candidates, cd_lands, cd_target, lexical, CdTarget, NO_FILES};
use super::rules::{Rule, Specifier};
use super::{FileAccess, PermissionTarget};
use baton_shell::{SimpleCommand, Word};
use baton_tool::context::Context;

/// What the Read deny rules say about a command.
pub(crate) enum Verdict {
    /// A covered file will be read.
    Denied(String),
    /// A file that may be covered may be read.
    Unsure(String),
}

/// The verdict of the `Read(…)` deny rules among `deny` on `parts`, or
/// `None` when they have nothing to say.
pub(crate) fn judge(
    parts: &CommandParts,
    deny: &[Rule],
    ctx: &Context,
    working_dir: &Path,
) -> Option<Verdict> {
    let probe = PermissionTarget::Path {
        path: PathBuf::new(),
        access: FileAccess::Read,
    };
    let rules: Vec<(&Rule, &PathPattern)> = deny
        .iter()
        .filter(|r| r.covers_tool("Read", &probe))
        .filter_map(|r| match &r.spec {
            Some(Specifier::Path(p)) => Some((r, p)),
            _ => None,
        })
        .collect();
    if rules.is_empty() {
        return None;
    }
    let commands = parts.every_command();
    if commands.is_empty() {
        return Some(Verdict::Unsure(
            "the command could not be parsed, so the files it reads cannot be checked against the Read deny rules".into(),
        ));
    }
    let mut unknown = None;
    for read in read_paths(&commands, ctx) {
        match read {
            ReadPath::Known(path) => {
                if let Some((rule, _)) = rules
                    .iter()
                    .find(|(_, p)| path_suspected(p, &path, working_dir))
                {
                    return Some(Verdict::Denied(format!(
                        "{} matches `{}`, which this command reads",
                        rule.describe(),
                        path.display()
                    )));
                }
            }
            ReadPath::Unknown(shown) => {
                unknown.get_or_insert(shown);
            }
        }
    }
    let shown = unknown?;
    Some(Verdict::Unsure(format!(
        "the command reads `{shown}`, whose path cannot be known before it runs, so the Read deny rules cannot be checked against it"
    )))
}

/// A path a command line may read, for Read deny rules: known (absolute,
/// not yet resolved), or unknown (a variable, a substitution, a directory
/// change that cannot be followed).
pub(crate) enum ReadPath {
    Known(PathBuf),
    Unknown(String),
}

/// Every path `commands` may open: each argument of a command that takes
/// files (option values included, and the text after a short option such
/// as `-f.env`, which may be its glued value), and each redirection
/// target, relative to every directory the line may be in. Generous on
/// purpose: it feeds deny and ask lookups only.
pub(crate) fn read_paths(commands: &[&SimpleCommand], ctx: &Context) -> Vec<ReadPath> {
    let mut out = Vec::new();
    let mut dirs = vec![ctx.cwd.clone()];
    for cmd in commands {
        if !matches!(cmd.name(), Some("cd" | "pushd" | "popd")) {
            continue;
        }
        let target = match cd_target(cmd) {
            Ok(CdTarget {
                path: Some(t),
                physical,
            }) if cmd.name() != Some("popd") => (t, physical),
            _ => {
                out.push(ReadPath::Unknown(cmd.text().to_string()));
                return out;
            }
        };
        let next: Vec<PathBuf> = dirs
            .iter()
            .flat_map(|base| cd_lands(base, &target.0, target.1))
            .collect();
        dirs.extend(next);
    }
    for cmd in commands {
        let name = cmd.name().unwrap_or("");
        if matches!(name, "cd" | "pushd" | "popd") {
            continue;
        }
        // A reader that walks directories opens files no argument names;
        // whether one of them is covered cannot be told from the text.
        let known = baton_shell::expand_args(cmd.args());
        if baton_shell::walks_contents(name, known.as_deref()) {
            out.push(ReadPath::Unknown(format!(
                "{} (it reads the files it finds in directories)",
                super::summary::first_line(cmd.text(), 80)
            )));
        }
        let words: Vec<&Word> = if NO_FILES.contains(&name) {
            Vec::new()
        } else {
            cmd.args().iter().collect()
        };
        let redirects = cmd.redirects().iter().filter_map(|r| {
            let text = matches!(r.op.as_str(), "<<" | "<<-" | "<<<");
            (!text).then_some(r.target.as_ref()).flatten()
        });
        for word in words.into_iter().chain(redirects) {
            let source = word.source();
            let plain_tilde = (source == "~" || source.starts_with("~/"))
                && !source.contains(['$', '`', '\'', '"', '\\', '*', '?', '[', '{']);
            let mut texts = if plain_tilde {
                vec![Some(source.to_string())]
            } else {
                candidates(word, &dirs)
            };
            if let Some(glued) = word
                .literal()
                .filter(|v| v.starts_with('-') && !v.starts_with("--") && v.len() > 2)
            {
                texts.push(Some(glued[2..].to_string()));
            }
            for text in texts {
                let Some(text) = text else {
                    out.push(ReadPath::Unknown(word.source().to_string()));
                    continue;
                };
                if text.starts_with('~') {
                    // `~` and `~/x` are most likely the home directory Baton
                    // runs with; a rule covering that is certain enough to
                    // deny, and anything else about `~` stays a question.
                    let home = std::env::var_os("HOME").map(PathBuf::from);
                    let rest = text
                        .strip_prefix('~')
                        .filter(|r| r.is_empty() || r.starts_with('/'));
                    if let (Some(home), Some(rest)) = (home.filter(|h| h.is_absolute()), rest) {
                        out.push(ReadPath::Known(lexical(
                            &home.join(rest.trim_start_matches('/')),
                        )));
                    }
                    out.push(ReadPath::Unknown(text));
                    continue;
                }
                for base in &dirs {
                    out.push(ReadPath::Known(lexical(&base.join(&text))));
                }
            }
        }
    }
    out
}
