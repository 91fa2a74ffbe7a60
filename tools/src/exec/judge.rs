//! How the two session tools are judged, so that neither is a way around
//! what `Bash` would be refused.
//!
//! `exec_command` is a shell command: its permission target is the command
//! line (prefixed by `cd <workdir> &&` when it runs elsewhere, so the rules
//! and the read-only judgement see where it runs), and the sandbox is chosen
//! for it as for `Bash`. Input to a program that reads shell commands is
//! itself a command line, and is judged as one; input to any other program
//! is covered by that program's own approval (docs/settings.md).

use std::path::Path;

/// Programs whose standard input is a command language that can do
/// anything a `Bash` command can. Their input is judged line by line.
const SHELLS: &[&str] = &[
    "bash", "sh", "dash", "zsh", "ksh", "mksh", "fish", "csh", "tcsh", "ash", "busybox", "su",
    "sudo", "env", "exec", "nsenter", "chroot", "unshare", "script", "ssh", "docker", "podman",
    "kubectl",
];

/// Whether `command` may start a program that reads shell commands on its
/// input. Errs on the side of yes: any word naming a shell (also after a
/// path, in a pipe, behind `env` or `exec`) counts.
pub(crate) fn reads_shell_commands(command: &str) -> bool {
    command
        .split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-')))
        .filter(|w| !w.is_empty())
        .map(|w| w.rsplit('/').next().unwrap_or(w))
        .any(|w| SHELLS.contains(&w))
}

/// The permission target of `exec_command`: the command, with the change of
/// directory made explicit when `workdir` differs from the call's.
pub(crate) fn command_target(command: &str, workdir: Option<&Path>, cwd: &Path) -> String {
    match workdir {
        Some(dir) if dir != cwd => format!("cd {} && {command}", quote(&dir.to_string_lossy())),
        _ => command.to_string(),
    }
}

/// Single-quoted for bash.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// Why `chars` may not be sent to a shell session, if it may not. Line
/// editing keys would change a line after it was judged (Ctrl-U, Ctrl-W,
/// Ctrl-A + Ctrl-K, DEL, escape sequences), so only printable text,
/// newline, tab, Ctrl-C (drops the line) and Ctrl-D (end of input) pass.
pub(crate) fn refuse_control(chars: &str) -> Option<String> {
    let bad = chars
        .chars()
        .find(|c| c.is_control() && !matches!(c, '\n' | '\t' | '\u{3}' | '\u{4}'))?;
    Some(format!(
        "The input contains the control character U+{:04X}, which could edit a line of this \
         shell session after it was checked; only text, newline, tab, Ctrl-C (\\u0003) and \
         Ctrl-D (\\u0004) can be sent to a shell.",
        bad as u32
    ))
}

/// The command text that writing `chars` to a shell completes or starts,
/// given the partial line already written: judged as one command line.
/// Ctrl-C discards what came before it on the line.
pub(crate) fn pending_text(partial: &str, chars: &str) -> String {
    let joined = format!("{partial}{chars}");
    match joined.rfind('\u{3}') {
        Some(i) => joined[i + 1..].to_string(),
        None => joined,
    }
    .replace('\u{4}', "")
}

/// What stays unfinished after `text` was written (the part after the
/// last newline).
pub(crate) fn remaining_partial(text: &str) -> String {
    match text.rfind('\n') {
        Some(i) => text[i + 1..].to_string(),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shells_are_recognised_however_named() {
        for cmd in [
            "bash",
            "/bin/bash -i",
            "env FOO=1 zsh",
            "cat | sh",
            "exec bash --norc",
            "python3 -c 'x' && /usr/bin/dash",
        ] {
            assert!(reads_shell_commands(cmd), "{cmd}");
        }
        for cmd in ["python3 -i", "node", "cat", "bashful --x", "psql db"] {
            assert!(!reads_shell_commands(cmd), "{cmd}");
        }
    }

    #[test]
    fn line_editing_is_refused_but_plain_text_passes() {
        assert!(refuse_control("ls -la\n").is_none());
        assert!(refuse_control("\u{3}").is_none());
        assert!(refuse_control("rm -rf /tmpx\u{7f}\n").is_some());
        assert!(refuse_control("echo hi\u{15}rm -rf ~\n").is_some());
        assert!(refuse_control("\u{1b}[A\n").is_some());
    }

    #[test]
    fn split_lines_are_judged_whole() {
        let first = pending_text("", "rm -r");
        assert_eq!(first, "rm -r");
        let partial = remaining_partial(&first);
        assert_eq!(pending_text(&partial, "f /\n"), "rm -rf /\n");
        assert_eq!(pending_text("rm -rf /", "\u{3}ls\n"), "ls\n");
    }

    #[test]
    fn workdir_is_made_explicit() {
        let cwd = Path::new("/p");
        assert_eq!(command_target("ls", None, cwd), "ls");
        assert_eq!(command_target("ls", Some(Path::new("/p")), cwd), "ls");
        assert_eq!(
            command_target("ls", Some(Path::new("/e t'c")), cwd),
            r"cd '/e t'\''c' && ls"
        );
    }
}
