//! Options of "harmless" programs that reach further than their operands.
//!
//! `cat`, `grep` or `wc` write nothing whatever their arguments, but some
//! options make them read files that no argument names (`--files0-from`
//! reads a list of names from a file, `sha256sum -c` the names in a
//! checksum file, jq's `import` searches directories named inside the
//! filter) or walk through symbolic links out of the workspace (`grep -R`,
//! `du -L`). The first kind is not read-only: the names are not in the
//! text, so nothing can check them. The second is read-only but reaches
//! anywhere, which the reach check turns into a question.
//!
//! Arguments are judged after brace expansion (`{-R,x}` is `-R x`). A word
//! whose value is unknown may be any option; the reach check asks about
//! every such word, so it is left out here.

use super::options::may_be;

/// Short option letters of `arg` when it is a cluster (`-nR`), else "".
fn shorts(arg: &str) -> &str {
    match arg.strip_prefix('-') {
        Some(rest) if !rest.starts_with('-') => rest,
        _ => "",
    }
}

/// Whether `args` hold the long option `long` (or an abbreviation of it)
/// or a short cluster with one of `letters`.
fn has(args: &[String], letters: &[char], long: &[&str]) -> bool {
    args.iter()
        .take_while(|a| *a != "--")
        .any(|a| shorts(a).contains(letters) || may_be(a, long))
}

/// Programs whose options are judged here.
pub(crate) fn watched(name: &str) -> bool {
    matches!(
        name,
        "grep"
            | "egrep"
            | "fgrep"
            | "ls"
            | "du"
            | "diff"
            | "jq"
            | "wc"
            | "cksum"
            | "b2sum"
            | "md5sum"
            | "sha1sum"
            | "sha224sum"
            | "sha256sum"
            | "sha384sum"
            | "sha512sum"
    )
}

/// Whether `name` with these (brace-expanded) arguments reads only what
/// its arguments name (they are checked elsewhere) and runs nothing.
pub(crate) fn reads_only_named(name: &str, args: &[String]) -> bool {
    match name {
        // A list of file names read from a file (or from standard input,
        // which the line may fill from anywhere).
        "wc" | "du" => !has(args, &[], &["--files0-from"]),
        // `-c FILE` reads every file named in FILE.
        "cksum" | "b2sum" | "md5sum" | "sha1sum" | "sha224sum" | "sha256sum" | "sha384sum"
        | "sha512sum" => !has(args, &['c'], &["--check"]),
        "jq" => jq(args),
        _ => true,
    }
}

/// jq's filter language loads modules and data files by name
/// (`import "m" as m {search: "/"}`, `include`, `import "d" as $d`,
/// `modulemeta`), and `-f` reads the filter itself from a file; neither
/// names a path a reach check could see. Refused wherever those words
/// appear, since telling the filter from the other arguments needs jq's
/// own option parser.
fn jq(args: &[String]) -> bool {
    let loads = |a: &String| {
        ["import", "include", "modulemeta", "get_search_list"]
            .iter()
            .any(|w| a.contains(w))
    };
    !(args.iter().any(loads) || has(args, &['f', 'L'], &["--from-file"]))
}

/// Whether `name` walks directories and follows the symbolic links it
/// meets there, so it may read anywhere a link in the workspace points.
pub fn follows_links(name: &str, args: &[String]) -> bool {
    match name {
        "grep" | "egrep" | "fgrep" => has(args, &['R'], &["--dereference-recursive"]),
        "rg" => has(args, &['L'], &["--follow"]),
        "find" => {
            // `-L` and `-follow`; `-H` follows only the named starting
            // points, which are checked as paths.
            args.iter().any(|a| a == "-L" || a == "-follow")
        }
        "ls" => has(args, &['R'], &["--recursive"]) && has(args, &['L'], &["--dereference"]),
        // du is recursive by default.
        "du" => has(args, &['L'], &["--dereference"]),
        "tree" => has(args, &['l'], &[]),
        // GNU diff -r follows links unless told not to.
        "diff" => has(args, &['r'], &["--recursive"]) && !has(args, &[], &["--no-dereference"]),
        _ => false,
    }
}

/// Whether some arguments make `name` follow links (so unknown arguments
/// may).
pub fn may_follow_links(name: &str) -> bool {
    matches!(
        name,
        "grep" | "egrep" | "fgrep" | "rg" | "find" | "ls" | "du" | "tree" | "diff"
    )
}

/// Whether `name` may read (and print) the contents of files it finds by
/// walking directories, rather than only files its arguments name: `grep
/// -r`, `rg` (recursive by default), `diff -r`, and the git commands that
/// print file contents from the work tree or the history (`git diff`,
/// `git show`, `git grep`, `git log -p`, …). `args` is `None` when unknown.
pub fn walks_contents(name: &str, args: Option<&[String]>) -> bool {
    let Some(args) = args else {
        return matches!(name, "grep" | "egrep" | "fgrep" | "rg" | "diff" | "git");
    };
    match name {
        "grep" | "egrep" | "fgrep" => {
            has(
                args,
                &['r', 'R'],
                &["--recursive", "--dereference-recursive"],
            ) || args.iter().any(|a| a.contains("recurse"))
        }
        "rg" => true,
        "git" => git_prints_contents(args),
        "diff" => has(args, &['r'], &["--recursive"]),
        _ => false,
    }
}

/// git subcommands that print the contents of files (a diff, a blob, a
/// matching line); `git status` or `git log` without a patch print names
/// and messages only. Global options before the subcommand other than a
/// few flags without a value make the answer yes.
fn git_prints_contents(args: &[String]) -> bool {
    let mut args = args;
    while let Some((first, tail)) = args.split_first() {
        match first.as_str() {
            "--no-pager"
            | "-P"
            | "-p"
            | "--paginate"
            | "--no-optional-locks"
            | "--no-replace-objects"
            | "--literal-pathspecs"
            | "--glob-pathspecs"
            | "--noglob-pathspecs"
            | "--icase-pathspecs"
            | "--no-advice" => args = tail,
            a if a.starts_with('-') => return true,
            _ => break,
        }
    }
    let Some(sub) = args.first() else {
        return false;
    };
    let rest = &args[1..];
    match sub.as_str() {
        "show" | "diff" | "diff-files" | "diff-index" | "diff-tree" | "grep" | "blame"
        | "annotate" | "cat-file" | "archive" | "format-patch" | "range-diff" | "stash"
        | "notes" => true,
        "log" | "whatchanged" | "reflog" | "shortlog" => rest.iter().any(|a| {
            let patchy = [
                "--patch",
                "--word-diff",
                "--color-words",
                "--cc",
                "--function-context",
            ];
            patchy.iter().any(|p| a.starts_with(p))
                || (a.starts_with('-')
                    && !a.starts_with("--")
                    && a[1..].contains(['p', 'u', 'L', 'W', 'c', 'm']))
        }),
        _ => false,
    }
}
