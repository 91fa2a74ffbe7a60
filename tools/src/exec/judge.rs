//! How the two session tools are judged, so that neither is a way around
//! what `Bash` would be refused.
//!
//! `exec_command` is a shell command: its permission target is the command
//! line (prefixed by `cd <workdir> &&` when it runs elsewhere, so the rules
//! and the read-only judgement see where it runs), and the sandbox is chosen
//! for it as for `Bash`. Input to a program that reads shell commands is
//! itself a command line, and is judged as one (what a write may contain
//! is in `input`, whether the shell is ready to read it in `terminal`);
//! input to any other program is covered by that program's own approval
//! (docs/settings.md).

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
