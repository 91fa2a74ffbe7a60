//! Is a command line free of side effects?
//!
//! A line is read-only when every simple command in it — including those in
//! substitutions, pipelines, loops and conditionals — is on the allowlist
//! with harmless arguments, nothing redirects output into a file or
//! through a descriptor the line did not open itself, no shell
//! state that steers later commands is changed, and no directory change is
//! combined with `git` (a repository's own config can run programs, e.g.
//! `core.fsmonitor`, so entering an unknown repository is not harmless).

use super::allowlist;
use super::syntax::{uses_inherited_descriptor, Script, SimpleCommand};

/// Environment prefixes that only change formatting (`LC_ALL=C sort`).
const HARMLESS_ENV: &[&str] = &["LANG", "LANGUAGE", "TZ", "NO_COLOR", "TERM", "COLUMNS"];

pub(crate) fn script_is_read_only(script: &Script) -> bool {
    if !script.constructs().is_empty() || script.commands().is_empty() {
        return false;
    }
    if script.redirects().iter().any(|r| r.writes_file()) {
        return false;
    }
    if !script.commands().iter().all(command_is_read_only) {
        return false;
    }
    !cd_combined_with_git(script)
}

/// A directory change and a `git` command in the same line: the `cd` may
/// lead `git` into a repository whose config runs programs.
pub(crate) fn cd_combined_with_git(script: &Script) -> bool {
    script.commands().iter().any(is_cd) && script.commands().iter().any(|c| c.name() == Some("git"))
}

pub(crate) fn is_cd(cmd: &SimpleCommand) -> bool {
    matches!(cmd.name(), Some("cd" | "pushd" | "popd"))
}

fn command_is_read_only(cmd: &SimpleCommand) -> bool {
    if !cmd.assignments().iter().all(|a| harmless_assignment(a)) {
        return false;
    }
    if cmd.redirects().iter().any(|r| r.writes_file()) {
        return false;
    }
    // `echo x >&7` writes wherever a descriptor the shell inherited leads.
    if uses_inherited_descriptor(cmd.redirects()) {
        return false;
    }
    // Only redirections (see `walk::redirect_only`): harmless unless they
    // write, which was checked above.
    if cmd.words().is_empty() && cmd.assignments().is_empty() {
        return !cmd.redirects().is_empty();
    }
    let Some(name) = cmd.name() else {
        return false;
    };
    allowlist::allows(name, cmd.args())
}

fn harmless_assignment(assignment: &str) -> bool {
    let Some((name, value)) = assignment.split_once('=') else {
        return false;
    };
    let plain_value = value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '/' | ':'));
    let harmless_name = HARMLESS_ENV.contains(&name) || name.starts_with("LC_");
    plain_value && harmless_name
}
