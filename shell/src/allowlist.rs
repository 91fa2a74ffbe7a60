//! The commands a read-only line may use, and the flags that disqualify them.
//!
//! Two kinds of entries: commands that cannot write whatever their
//! arguments (`cat`, `ls`), and commands that are read-only only with some
//! flags (`sort` without `-o`, `find` without `-delete`/`-exec`). For the
//! second kind every argument must be a fixed word: a variable or a glob
//! could turn into the forbidden flag at run time.

use super::git;
use super::inspect;
use super::programs;
use super::syntax::Word;

/// Harmless whatever their arguments.
const ANY_ARGS: &[&str] = &[
    "[[",
    "arch",
    "b2sum",
    "base32",
    "base64",
    "basename",
    "cal",
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
    "expr",
    "false",
    "fgrep",
    "fmt",
    "fold",
    "free",
    "getconf",
    "grep",
    "groups",
    "head",
    "hexdump",
    "id",
    "join",
    "jq",
    "locale",
    "logname",
    "ls",
    "md5sum",
    "nl",
    "nproc",
    "numfmt",
    "od",
    "paste",
    "pgrep",
    "pr",
    "printenv",
    "ps",
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
    "sum",
    "tac",
    "tail",
    "tr",
    "true",
    "tsort",
    "tty",
    "type",
    "uname",
    "unexpand",
    "uptime",
    "users",
    "wc",
    "which",
    "who",
    "whoami",
];

pub(crate) fn allows(name: &str, args: &[Word]) -> bool {
    if ANY_ARGS.contains(&name) {
        if !super::flags::watched(name) {
            return true;
        }
        // Words whose value is unknown are not judged here: the reach
        // check asks about each of them before the command may run.
        return super::flags::reads_only_named(name, &super::expand::known_args(args));
    }
    // `test` and `[` give meaning to each argument by its position and the
    // number of arguments, so a word bash may turn into several (`{-v,x}`,
    // a glob, an unquoted `$x`) changes what is evaluated: `test
    // {-v,'a[$(touch F)]'}` evaluates a subscript.
    if matches!(name, "test" | "[") && args.iter().any(super::expand::may_be_several) {
        return false;
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
    if name == "sleep" {
        // Durations only (`0.5`, `2m`, `inf`); any option but the two
        // informational ones is not understood.
        return args.iter().all(|w| {
            w.fixed().is_some_and(|a| {
                matches!(a, "--help" | "--version" | "inf" | "infinity")
                    || a.strip_suffix(['s', 'm', 'h', 'd'])
                        .unwrap_or(a)
                        .parse::<f64>()
                        .is_ok_and(|n| n.is_finite() && n >= 0.0)
            })
        });
    }
    if name == "printf" {
        // `printf -v NAME` assigns a shell variable (PATH, say), and so
        // does a `%n` conversion in the format (`printf %n PATH`).
        let mut rest = args;
        if rest.first().and_then(Word::fixed) == Some("--") {
            rest = &rest[1..];
        }
        return rest.first().is_none_or(|w| {
            w.fixed()
                .is_some_and(|f| !f.starts_with("-v") && !super::printf::assigns(f))
        });
    }
    let Some(args) = args.iter().map(Word::fixed).collect::<Option<Vec<&str>>>() else {
        return false;
    };
    match name {
        "find" => programs::find(&args),
        "git" => git::allows(&args),
        "sort" => programs::sort(&args),
        "sed" => programs::sed(&args),
        "uniq" => programs::uniq(&args),
        "date" => programs::date(&args),
        "rg" => programs::rg(&args),
        "file" => programs::file(&args),
        "tree" => programs::tree(&args),
        "ss" => inspect::ss(&args),
        "netstat" => inspect::netstat(&args),
        "lsof" => inspect::lsof(&args),
        "ip" => inspect::ip(&args),
        "history" => inspect::history(&args),
        "alias" => inspect::alias(&args),
        "node" | "python" | "python3" => inspect::version_probe(name, &args),
        "docker" => inspect::docker(&args),
        "gh" => inspect::gh(&args),
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

/// `arg` may be the long option `full`, possibly abbreviated (getopt
/// accepts any unambiguous prefix) and possibly with `=value`.
pub(crate) fn long_is(arg: &str, full: &str) -> bool {
    super::options::may_be(arg, &[full])
}
