//! Commands that run other commands.
//!
//! `timeout 5 git push`, `env -i git push`, `bash -c 'git push'` and
//! `eval git push` all push. A rule written for `git push` must see through
//! them, so this module says which command (or commands) a simple command
//! runs, and whether that cannot be known from the text (`bash -c "$X"`,
//! `xargs` taking its arguments from input, an option it does not know).
//! It also normalises `git`'s global options (`git -C . -c k=v push` is a
//! push).

use super::syntax::{Placement, SimpleCommand, Word};

/// What a command runs besides itself.
#[derive(Clone, Debug, Default)]
pub struct Inner {
    /// The commands it runs, as far as the text says.
    pub commands: Vec<SimpleCommand>,
    /// Part of what it runs is not in the text: a payload that is not a
    /// literal, arguments read from input, an option not understood.
    pub opaque: bool,
}

impl Inner {
    fn opaque() -> Inner {
        Inner {
            commands: Vec::new(),
            opaque: true,
        }
    }
}

/// Options of a wrapper: which take a value in the next word.
struct Spec {
    /// Options without a value.
    flags: &'static [&'static str],
    /// Options whose value is the next word (or glued: `-n5`, `--x=5`).
    valued: &'static [&'static str],
    /// Operands before the command (`timeout DURATION cmd`).
    operands: usize,
}

fn spec(name: &str) -> Option<Spec> {
    let s = |flags, valued, operands| {
        Some(Spec {
            flags,
            valued,
            operands,
        })
    };
    match name {
        "command" => s(&["-p"], &[], 0),
        "builtin" | "nohup" => s(&[], &[], 0),
        "exec" => s(&["-c", "-l", "-cl", "-lc"], &["-a"], 0),
        "nice" => s(&[], &["-n", "--adjustment"], 0),
        "timeout" => s(
            &["--preserve-status", "--foreground", "-v", "--verbose"],
            &["-k", "--kill-after", "-s", "--signal"],
            1,
        ),
        "time" => s(
            &["-p", "-a", "-v", "--portability", "--append", "--verbose"],
            &["-f", "--format", "-o", "--output"],
            0,
        ),
        "stdbuf" => s(
            &[],
            &["-i", "-o", "-e", "--input", "--output", "--error"],
            0,
        ),
        "env" => s(
            &[
                "-i",
                "--ignore-environment",
                "-0",
                "--null",
                "-",
                "-v",
                "--debug",
            ],
            &["-u", "--unset", "-C", "--chdir"],
            0,
        ),
        "setsid" => s(&["-c", "-f", "-w", "--ctty", "--fork", "--wait"], &[], 0),
        "ionice" => s(&["-t"], &["-c", "-n", "--class", "--classdata"], 0),
        "sudo" | "doas" => s(
            &["-E", "-H", "-n", "-k", "-b", "-P", "-S"],
            &["-u", "-g", "-C", "-h", "-p", "-U"],
            0,
        ),
        "xargs" => s(
            &[
                "-0",
                "--null",
                "-p",
                "--interactive",
                "-r",
                "--no-run-if-empty",
                "-t",
                "--verbose",
                "-x",
                "--exit",
                "--open-tty",
                "-o",
            ],
            &[
                "-a",
                "--arg-file",
                "-d",
                "--delimiter",
                "-E",
                "-I",
                "-L",
                "-n",
                "--max-args",
                "-P",
                "--max-procs",
                "-s",
                "--max-chars",
                "--process-slot-var",
            ],
            0,
        ),
        _ => None,
    }
}

const SHELLS: &[&str] = &["bash", "sh", "dash", "zsh", "ksh", "ash", "mksh", "busybox"];

/// The commands `cmd` runs besides itself. `depth` bounds nested payloads.
pub fn inner(cmd: &SimpleCommand, depth: usize) -> Inner {
    if depth > 8 {
        return Inner::opaque();
    }
    let words = cmd.words();
    let Some(name) = cmd.name() else {
        // `$CMD args`: the program is chosen at run time.
        return if words.is_empty() {
            Inner::default()
        } else {
            Inner::opaque()
        };
    };
    let base = name.rsplit('/').next().unwrap_or(name);
    let args = cmd.args();
    if SHELLS.contains(&base) {
        return shell_payload(cmd, args, depth);
    }
    match base {
        "eval" => payload(cmd, args, depth),
        "find" => find_exec(cmd, args),
        "command" if matches!(args.first().and_then(Word::fixed), Some("-v" | "-V")) => {
            Inner::default()
        }
        _ => match spec(base) {
            Some(spec) => wrapped(cmd, base, args, &spec),
            None => Inner::default(),
        },
    }
}

fn wrapped(cmd: &SimpleCommand, base: &str, args: &[Word], spec: &Spec) -> Inner {
    let mut i = 0;
    let mut assignments = Vec::new();
    let mut operands = spec.operands;
    while let Some(word) = args.get(i) {
        let Some(arg) = word.fixed() else {
            return Inner::opaque();
        };
        if arg == "--" {
            i += 1;
            break;
        }
        if base == "env" && !arg.starts_with('-') && arg.contains('=') {
            assignments.push(arg.to_string());
            i += 1;
            continue;
        }
        if base == "nice"
            && arg.len() > 1
            && arg[1..].chars().all(|c| c.is_ascii_digit())
            && arg.starts_with('-')
        {
            i += 1;
            continue;
        }
        if arg.starts_with('-') && arg.len() > 1 {
            let (name, glued) = match arg.split_once('=') {
                Some((n, _)) => (n, true),
                None => (arg, false),
            };
            if spec.flags.contains(&arg) {
                i += 1;
            } else if spec.valued.contains(&name) {
                i += if glued { 1 } else { 2 };
            } else if !arg.starts_with("--") && spec.valued.contains(&&arg[..2]) {
                // A short option with its value glued on: `-n5`.
                i += 1;
            } else {
                return Inner::opaque();
            }
            continue;
        }
        if operands > 0 {
            operands -= 1;
            i += 1;
            continue;
        }
        break;
    }
    let rest = args.get(i..).unwrap_or(&[]);
    if rest.is_empty() {
        return Inner::default();
    }
    let mut inner = Inner {
        commands: vec![synthetic(cmd, rest, assignments)],
        opaque: false,
    };
    // xargs appends arguments read from its input.
    if base == "xargs" {
        inner.opaque = true;
    }
    inner
}

/// `find ... -exec cmd args ;` (and `-execdir`, `-ok`, `-okdir`).
fn find_exec(cmd: &SimpleCommand, args: &[Word]) -> Inner {
    let mut inner = Inner::default();
    let mut i = 0;
    while i < args.len() {
        let action = args[i].fixed();
        if matches!(action, Some("-exec" | "-execdir" | "-ok" | "-okdir")) {
            let start = i + 1;
            let mut end = start;
            while end < args.len() && !matches!(args[end].fixed(), Some(";" | "+")) {
                end += 1;
            }
            if end > start {
                inner
                    .commands
                    .push(synthetic(cmd, &args[start..end], Vec::new()));
            }
            i = end;
        } else if action.is_none() {
            // A variable could spell `-exec`.
            inner.opaque = true;
        }
        i += 1;
    }
    inner
}

/// `bash [options] -c PAYLOAD [name args]`; without `-c` the shell runs a
/// script file or its input, which the text does not show.
fn shell_payload(cmd: &SimpleCommand, args: &[Word], depth: usize) -> Inner {
    let mut i = 0;
    while let Some(word) = args.get(i) {
        let Some(arg) = word.fixed() else {
            return Inner::opaque();
        };
        if arg.starts_with('-') && arg.len() > 1 && !arg.starts_with("--") && arg.contains('c') {
            return match args.get(i + 1) {
                Some(p) => payload(cmd, std::slice::from_ref(p), depth),
                None => Inner::opaque(),
            };
        }
        if matches!(arg, "-o" | "+o" | "-O" | "+O") {
            i += 2;
            continue;
        }
        if arg.starts_with(['-', '+']) {
            i += 1;
            continue;
        }
        break;
    }
    Inner::opaque()
}

/// Words joined with spaces and parsed as a command line (`eval`, `-c`).
fn payload(cmd: &SimpleCommand, words: &[Word], depth: usize) -> Inner {
    let Some(parts) = words
        .iter()
        .map(Word::literal)
        .collect::<Option<Vec<&str>>>()
    else {
        return Inner::opaque();
    };
    let text = parts.join(" ");
    if text.trim().is_empty() {
        return Inner::default();
    }
    match super::parse(&text) {
        Ok(script) => {
            let unsure = script.constructs().iter().any(|c| {
                matches!(
                    c,
                    super::Construct::Unsupported(_) | super::Construct::TooDeep
                )
            });
            let mut commands = script.into_commands();
            for c in &mut commands {
                c.span = cmd.span.clone();
            }
            let _ = depth;
            Inner {
                commands,
                opaque: unsure,
            }
        }
        Err(_) => Inner::opaque(),
    }
}

fn synthetic(outer: &SimpleCommand, words: &[Word], assignments: Vec<String>) -> SimpleCommand {
    let sources: Vec<&str> = words.iter().map(Word::source).collect();
    SimpleCommand {
        text: sources.join(" "),
        span: outer.span.clone(),
        assignments,
        words: words.to_vec(),
        redirects: Vec::new(),
        placement: match outer.placement {
            Placement::Direct => Placement::Direct,
            Placement::Substitution => Placement::Substitution,
        },
    }
}

/// `git`'s global options that take the next word as their value.
const GIT_VALUED: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--config-env",
    "--attr-source",
    "--super-prefix",
];

/// `git [global options] sub args` as `git sub args` (literal values), or
/// `None` when this is not git, or when a global option could change which
/// command runs (`-c alias.x=…`, a non-literal word) or it has no
/// subcommand. The second value says the options were not understood.
pub fn git_normalized(cmd: &SimpleCommand) -> Option<Result<Vec<String>, ()>> {
    let name = cmd.name()?;
    if name.rsplit('/').next() != Some("git") {
        return None;
    }
    let args = cmd.args();
    let mut i = 0;
    while let Some(word) = args.get(i) {
        let Some(arg) = word.literal() else {
            return Some(Err(()));
        };
        if !arg.starts_with('-') {
            break;
        }
        let (name, glued) = match arg.split_once('=') {
            Some((n, _)) => (n, true),
            None => (arg, false),
        };
        let value = if GIT_VALUED.contains(&name) && !glued {
            let v = args.get(i + 1).and_then(Word::literal);
            i += 2;
            v
        } else if name.starts_with("-c") && name.len() > 2 {
            i += 1;
            Some(&arg[2..])
        } else {
            i += 1;
            arg.split_once('=').map(|(_, v)| v)
        };
        if name == "--config-env" {
            // The value comes from the environment: any key, any value.
            return Some(Err(()));
        }
        if name == "-c" || arg.starts_with("-c") {
            // An alias or an include (`include.path=/dev/stdin` loads a
            // config with aliases) renames a subcommand; only keys that
            // cannot are understood.
            match value {
                Some(v) if super::git::inert_command_line_key(v) => {}
                _ => return Some(Err(())),
            }
        } else if !super::git::known_global(name) {
            return Some(Err(()));
        }
    }
    // `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`, `GIT_CONFIG_PARAMETERS` and
    // `GIT_CONFIG_GLOBAL` load configuration (aliases included) from the
    // environment; `GIT_EXEC_PATH` changes where subcommands are found.
    if cmd.assignments().iter().any(|a| {
        let var = a.split('=').next().unwrap_or(a);
        var.starts_with("GIT_CONFIG")
            || var == "GIT_EXEC_PATH"
            || var == "HOME"
            || var == "XDG_CONFIG_HOME"
    }) {
        return Some(Err(()));
    }
    // A name git does not have may be an alias from a config file (the
    // user's or the repository's), which a rule cannot see through.
    match args.get(i).and_then(Word::literal) {
        Some(sub) if super::git::is_subcommand(sub) => {}
        Some(_) => return Some(Err(())),
        None if i < args.len() => return Some(Err(())),
        None => {}
    }
    let mut out = vec!["git".to_string()];
    for word in args.get(i..).unwrap_or(&[]) {
        out.push(word.literal().unwrap_or(word.source()).to_string());
    }
    Some(Ok(out))
}
