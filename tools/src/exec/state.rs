//! Lines that leave code behind in an interactive shell.
//!
//! The rules judge a line by what it runs. In a `bash -c` that is all it
//! does; a shell session lives on, and some lines store text that the
//! interactive shell runs later, with no line showing it: an alias is
//! expanded in the lines after it, `PROMPT_COMMAND` and the prompts
//! (`PS0`, `PS1` with `$(…)`) run before each prompt, a `DEBUG` trap before
//! each command, `fc` reruns an earlier line edited, `histchars` moves
//! history expansion to characters the judge lets through, and `PATH` or
//! `IFS` change what later lines mean. Such a line is not judged by the
//! rules alone: someone must approve it (or, where nobody can, it is
//! refused), whatever the rules allow.

use baton_engine::shell::{self, wrappers, Construct, SimpleCommand};

/// Builtins whose effect outlives the line: what they define runs later,
/// or changes how later lines are read.
const STATEFUL: &[&str] = &[
    "alias", "trap", "fc", "history", "bind", "complete", "compopt", "shopt", "enable", "source",
    ".", "hash", "set",
];

/// Builtins that set variables named in their arguments.
const SETTERS: &[&str] = &[
    "export",
    "declare",
    "typeset",
    "local",
    "readonly",
    "read",
    "mapfile",
    "readarray",
    "printf",
    "getopts",
];

/// Variables an interactive bash consults when it reads or runs later
/// lines.
const CONSULTED: &[&str] = &[
    "PS0",
    "PS1",
    "PS2",
    "PS3",
    "PS4",
    "PROMPT_COMMAND",
    "histchars",
    "HISTFILE",
    "INPUTRC",
    "BASH_ENV",
    "ENV",
    "PATH",
    "CDPATH",
    "HOME",
    "OLDPWD",
    "IFS",
    "GLOBIGNORE",
    "EXECIGNORE",
    "BASH_XTRACEFD",
    "BASH_LOADABLES_PATH",
    "SHELLOPTS",
    "BASHOPTS",
];

/// Why `line` leaves behind something the shell runs or reads later
/// lines by, if it does. Lines that do not parse are left to the rules,
/// which allow none of them.
pub(crate) fn leaves_code_behind(line: &str) -> Option<String> {
    let script = shell::parse(line).ok()?;
    for construct in script.constructs() {
        if let Construct::Assignment(name) = construct {
            if consulted(name) {
                return Some(reason(&format!("sets `{}`", base(name))));
            }
        }
    }
    script.commands().iter().find_map(|c| stateful(c, 0))
}

fn stateful(cmd: &SimpleCommand, depth: usize) -> Option<String> {
    // A prefix assignment lasts past its command before a special builtin
    // in POSIX mode.
    if let Some(var) = cmd
        .assignments()
        .iter()
        .map(|a| a.split('=').next().unwrap_or(a))
        .find(|v| consulted(v))
    {
        return Some(reason(&format!("sets `{}`", base(var))));
    }
    let name = cmd
        .name()
        .or_else(|| cmd.words().first().map(|w| w.source()));
    match name {
        Some(name) if STATEFUL.contains(&name) => {
            return Some(reason(&format!("runs `{name}`")));
        }
        // `exec` without a program changes the shell's own descriptors:
        // `exec 0<fifo` would have it read its lines from elsewhere.
        // (The parser may take the `0` of `0<fifo` for a word.)
        Some("exec")
            if cmd.args().iter().all(|w| {
                let a = w.source();
                a.starts_with('-') || a.bytes().all(|b| b.is_ascii_digit())
            }) =>
        {
            return Some(reason("runs `exec` without a program"));
        }
        Some(name) if SETTERS.contains(&name) => {
            if let Some(var) = cmd.args().iter().find_map(|w| {
                let text = w.literal().unwrap_or(w.source());
                let var = text.split('=').next().unwrap_or(text);
                consulted(var).then_some(var)
            }) {
                return Some(reason(&format!("sets `{}`", base(var))));
            }
        }
        _ => {}
    }
    if depth < 8 {
        let inner = wrappers::inner(cmd, depth);
        return inner.commands.iter().find_map(|c| stateful(c, depth + 1));
    }
    None
}

/// `NAME` of `NAME`, `NAME[i]` or `NAME+`.
fn base(name: &str) -> &str {
    name.split(['[', '+']).next().unwrap_or(name)
}

fn consulted(name: &str) -> bool {
    CONSULTED.contains(&base(name))
}

fn reason(what: &str) -> String {
    format!(
        "the line {what}, which changes what this interactive shell runs or how it reads later \
         lines, beyond what the rules see in this line"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_that_leave_code_behind_are_found() {
        for line in [
            "alias e='touch x'\n",
            "PROMPT_COMMAND='touch x'\n",
            "PROMPT_COMMAND[1]='touch x'\n",
            "export PS1='$(touch x)'\n",
            "declare -x PS0='$(touch x)'\n",
            "echo hi; trap 'touch x' DEBUG\n",
            "fc -s a=b\n",
            "histchars='%'\n",
            "PATH=/tmp/evil:$PATH\n",
            "read -r IFS\n",
            "printf -v PS1 '%s' x\n",
            "set -o emacs\n",
            "shopt -s extdebug\n",
            "builtin alias e=x\n",
            "command trap x EXIT\n",
            "eval 'alias e=x'\n",
            "exec 0</tmp/fifo\n",
            ". ./env.sh\n",
            "for PS1 in x; do :; done\n",
            "PATH=/usr/bin ls\n",
        ] {
            assert!(leaves_code_behind(line).is_some(), "{line:?}");
        }
    }

    #[test]
    fn ordinary_lines_pass() {
        for line in [
            "echo 'PS1=$(x)' alias trap\n",
            "x=1; echo $x\n",
            "export FOO=bar\n",
            "LC_ALL=C sort f\n",
            "exec ls\n",
            "cd /tmp && ls\n",
            "read -r line\n",
            "echo 'a\n",
        ] {
            assert!(leaves_code_behind(line).is_none(), "{line:?}");
        }
    }
}
