//! The commands a read-only line may use, and the flags that disqualify them.
//!
//! Two kinds of entries: commands that cannot write whatever their
//! arguments (`cat`, `ls`), and commands that are read-only only with some
//! flags (`sort` without `-o`, `find` without `-delete`/`-exec`). For the
//! second kind every argument must be a fixed word: a variable or a glob
//! could turn into the forbidden flag at run time.

use super::git;
use super::syntax::Word;

/// Harmless whatever their arguments.
const ANY_ARGS: &[&str] = &[
    "[[",
    "arch",
    "b2sum",
    "basename",
    "cat",
    "cd",
    "cksum",
    "cmp",
    "column",
    "comm",
    "cut",
    "df",
    "diff",
    "dirname",
    "du",
    "echo",
    "egrep",
    "expand",
    "false",
    "fgrep",
    "fold",
    "grep",
    "groups",
    "head",
    "hexdump",
    "id",
    "jq",
    "join",
    "locale",
    "ls",
    "md5sum",
    "nl",
    "nproc",
    "od",
    "paste",
    "printenv",
    "pwd",
    "readlink",
    "realpath",
    "rev",
    "seq",
    "sha1sum",
    "sha224sum",
    "sha256sum",
    "sha384sum",
    "sha512sum",
    "stat",
    "strings",
    "tac",
    "tail",
    "tr",
    "true",
    "type",
    "uname",
    "unexpand",
    "wc",
    "which",
    "whoami",
];

pub(crate) fn allows(name: &str, args: &[Word]) -> bool {
    if ANY_ARGS.contains(&name) {
        return true;
    }
    if name == "test" {
        return super::evaluated::test_args_ok(args);
    }
    if name == "[" {
        return match args.split_last() {
            Some((last, rest)) if last.fixed() == Some("]") => super::evaluated::test_args_ok(rest),
            _ => false,
        };
    }
    if name == "printf" {
        // `printf -v NAME` assigns a shell variable (PATH, say); the format
        // and values after the first word cannot.
        return args
            .first()
            .is_none_or(|w| w.fixed().is_some_and(|f| !f.starts_with("-v")));
    }
    let Some(args) = args.iter().map(Word::fixed).collect::<Option<Vec<&str>>>() else {
        return false;
    };
    match name {
        "find" => find(&args),
        "git" => git::allows(&args),
        "sort" => sort(&args),
        "sed" => sed(&args),
        "uniq" => uniq(&args),
        "date" => date(&args),
        "rg" => rg(&args),
        "file" => !args
            .iter()
            .any(|a| short_has(a, 'C') || long_is(a, "--compile")),
        // `-o` writes a file; `-R` (with `-H`) writes 00Tree.html everywhere.
        "tree" => !args.iter().any(|a| short_has(a, 'o') || short_has(a, 'R')),
        "env" => args.iter().all(|a| matches!(*a, "-0" | "--null")),
        // `command -v name` only looks a name up; plain `command x` runs x.
        "command" => matches!(args.first(), Some(&("-v" | "-V"))),
        "hostname" => args.iter().all(|a| {
            matches!(
                *a,
                "-f" | "-s" | "-i" | "-I" | "-d" | "-A" | "-a" | "--fqdn" | "--long" | "--short"
            )
        }),
        _ => false,
    }
}

/// `arg` is a cluster of short options (`-nr`) containing `flag`.
pub(crate) fn short_has(arg: &str, flag: char) -> bool {
    arg.len() > 1 && arg.starts_with('-') && !arg.starts_with("--") && arg[1..].contains(flag)
}

/// `arg` is the long option `full`, possibly abbreviated (getopt accepts any
/// unambiguous prefix) and possibly with `=value`.
pub(crate) fn long_is(arg: &str, full: &str) -> bool {
    let name = arg.split('=').next().unwrap_or(arg);
    name.len() > 2 && name.starts_with("--") && full.starts_with(name)
}

fn find(args: &[&str]) -> bool {
    const ACTIONS: &[&str] = &[
        "-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls",
    ];
    !args.iter().any(|a| ACTIONS.contains(a))
}

fn sort(args: &[&str]) -> bool {
    !args
        .iter()
        .any(|a| short_has(a, 'o') || long_is(a, "--output") || long_is(a, "--compress-program"))
}

fn rg(args: &[&str]) -> bool {
    // `--pre` and `--hostname-bin` run a program of the caller's choosing.
    !args
        .iter()
        .any(|a| long_is(a, "--pre") || long_is(a, "--pre-glob") || long_is(a, "--hostname-bin"))
}

fn uniq(args: &[&str]) -> bool {
    // A second file operand is an output file.
    let mut operands = 0;
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        match *arg {
            "-f" | "-s" | "-w" | "--skip-fields" | "--skip-chars" | "--check-chars" => {
                iter.next();
            }
            "--" => operands += iter.len(),
            a if a.starts_with('-') && a.len() > 1 => {}
            _ => operands += 1,
        }
    }
    operands <= 1
}

fn date(args: &[&str]) -> bool {
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        if short_has(arg, 's') || long_is(arg, "--set") {
            return false;
        }
        match *arg {
            "-d" | "-f" | "-r" | "--date" | "--file" | "--reference" => {
                iter.next();
            }
            a if a.starts_with('-') || a.starts_with('+') => {}
            // A bare operand sets the clock.
            _ => return false,
        }
    }
    true
}

fn sed(args: &[&str]) -> bool {
    let mut scripts = Vec::new();
    let mut sandbox = false;
    let mut operands = Vec::new();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        match *arg {
            "--sandbox" => sandbox = true,
            "-e" | "--expression" => match iter.next() {
                Some(s) => scripts.push(*s),
                None => return false,
            },
            a if a.starts_with("--expression=") => scripts.push(&a["--expression=".len()..]),
            a if long_is(a, "--in-place") || long_is(a, "--file") => return false,
            a if a.starts_with('-') && !a.starts_with("--") && a.len() > 1 => {
                // Short options cluster; `-e` may carry its script glued on.
                let flags = &a[1..];
                if let Some(pos) = flags.find('e') {
                    if flags[..pos].contains(['i', 'f']) {
                        return false;
                    }
                    let glued = &flags[pos + 1..];
                    if glued.is_empty() {
                        match iter.next() {
                            Some(s) => scripts.push(*s),
                            None => return false,
                        }
                    } else {
                        scripts.push(glued);
                    }
                } else if flags.contains(['i', 'f']) {
                    return false;
                }
            }
            a if a.starts_with("--") => {}
            a => operands.push(a),
        }
    }
    if scripts.is_empty() {
        match operands.first() {
            Some(s) => scripts.push(s),
            None => return false,
        }
    }
    // Without --sandbox, the `w`/`W` commands and the `e`/`w` flags of `s`
    // write files or run programs. Finding them precisely needs a sed
    // parser; refusing any script with those letters errs on the safe side.
    sandbox || scripts.iter().all(|s| !s.contains(['w', 'W', 'e']))
}
