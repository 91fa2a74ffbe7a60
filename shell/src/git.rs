//! Which `git` invocations only read.
//!
//! Global options are refused except a few harmless ones: `-c` and
//! `--config-env` can set `core.pager`, `core.fsmonitor` or an alias to any
//! program, and `-C`, `--git-dir`, `--work-tree`, `--exec-path` point git at
//! other code or another repository's config. Subcommands are allowed
//! by name, some only in their listing form (`branch`, `tag`, `stash list`).

use super::allowlist::{long_is, short_has};

/// Subcommands that never write, whatever their (non-dangerous) flags.
const READERS: &[&str] = &[
    "annotate",
    "blame",
    "cat-file",
    "check-attr",
    "check-ignore",
    "cherry",
    "count-objects",
    "describe",
    "diff",
    "diff-files",
    "diff-index",
    "diff-tree",
    "for-each-ref",
    "grep",
    "log",
    "ls-files",
    "ls-tree",
    "merge-base",
    "name-rev",
    "rev-list",
    "rev-parse",
    "shortlog",
    "show",
    "show-branch",
    "show-ref",
    "status",
    "version",
    "whatchanged",
];

pub(crate) fn allows(args: &[&str]) -> bool {
    let mut rest = args;
    while let Some((first, tail)) = rest.split_first() {
        if !first.starts_with('-') {
            break;
        }
        match *first {
            "--no-pager"
            | "-P"
            | "--no-optional-locks"
            | "--no-replace-objects"
            | "--literal-pathspecs"
            | "--glob-pathspecs"
            | "--noglob-pathspecs"
            | "--icase-pathspecs" => rest = tail,
            "--version" => return tail.is_empty(),
            _ => return false,
        }
    }
    let Some((sub, rest)) = rest.split_first() else {
        return false;
    };
    if rest.iter().any(|a| dangerous_flag(a)) {
        return false;
    }
    match *sub {
        s if READERS.contains(&s) => true,
        "branch" => branch(rest),
        "tag" => tag(rest),
        "remote" => rest.iter().all(|a| matches!(*a, "-v" | "--verbose")),
        "config" => config(rest),
        "stash" => matches!(rest.first(), Some(&"list" | &"show")),
        "worktree" => rest.first() == Some(&"list"),
        "notes" => rest.is_empty() || matches!(rest.first(), Some(&"list" | &"show")),
        "reflog" => !matches!(rest.first(), Some(&"expire" | &"delete")),
        _ => false,
    }
}

/// Flags that write a file or run a program in otherwise reading commands.
fn dangerous_flag(arg: &str) -> bool {
    [
        "--output",
        "--ext-diff",
        "--open-files-in-pager",
        "--exec",
        "--upload-pack",
        "--textconv",
    ]
    .iter()
    .any(|full| long_is(arg, full))
        || arg.starts_with("-O")
}

/// The valued flags `git branch` and `git tag` share: which refs to list
/// and how to print them.
const REF_FILTERS: &[&str] = &[
    "--contains",
    "--no-contains",
    "--merged",
    "--no-merged",
    "--points-at",
    "--sort",
    "--format",
];

/// `git branch` lists unless given a name or a modifying flag.
fn branch(args: &[&str]) -> bool {
    listing(
        args,
        &[
            "-a",
            "--all",
            "-r",
            "--remotes",
            "-v",
            "-vv",
            "--verbose",
            "--show-current",
            "-i",
            "--ignore-case",
            "--no-color",
            "--no-column",
            "--no-abbrev",
        ],
        REF_FILTERS,
        &["--color", "--column", "--abbrev"],
    )
}

fn tag(args: &[&str]) -> bool {
    // `-n<num>` prints annotation lines; it only takes a glued value.
    let others: Vec<&str> = args
        .iter()
        .copied()
        .filter(|a| {
            !a.strip_prefix("-n")
                .is_some_and(|n| n.chars().all(|c| c.is_ascii_digit()))
        })
        .collect();
    listing(
        &others,
        &["-i", "--ignore-case", "--no-column", "--no-color"],
        REF_FILTERS,
        &["--color", "--column"],
    )
}

/// Flags from `plain`, `valued` (value glued with `=` or in the next word),
/// `optional` (value only glued); operands only after `-l`/`--list`.
fn listing(args: &[&str], plain: &[&str], valued: &[&str], optional: &[&str]) -> bool {
    let list = args.iter().any(|a| matches!(*a, "-l" | "--list"));
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        let name = arg.split('=').next().unwrap_or(arg);
        if matches!(*arg, "-l" | "--list") || plain.contains(arg) || optional.contains(&name) {
            continue;
        }
        if valued.contains(&name) {
            if !arg.contains('=') {
                iter.next();
            }
            continue;
        }
        if arg.starts_with('-') || !list {
            return false;
        }
    }
    true
}

fn config(args: &[&str]) -> bool {
    const WRITES: &[&str] = &[
        "--add",
        "--unset",
        "--unset-all",
        "--replace-all",
        "--edit",
        "--rename-section",
        "--remove-section",
    ];
    if args
        .iter()
        .any(|a| WRITES.iter().any(|w| long_is(a, w)) || short_has(a, 'e'))
    {
        return false;
    }
    match args.first() {
        Some(&"list") => true,
        Some(&"get") => true,
        _ => args.iter().any(|a| {
            matches!(
                *a,
                "-l" | "--list" | "--get" | "--get-all" | "--get-regexp" | "--get-urlmatch"
            )
        }),
    }
}

/// Every command git 2.47 has, built in or shipped with it. An alias can
/// never take one of these names, so any other name may be an alias.
const SUBCOMMANDS: &[&str] = &[
    "add",
    "am",
    "annotate",
    "apply",
    "archimport",
    "archive",
    "bisect",
    "blame",
    "branch",
    "bugreport",
    "bundle",
    "cat-file",
    "check-attr",
    "check-ignore",
    "check-mailmap",
    "check-ref-format",
    "checkout",
    "checkout-index",
    "cherry",
    "cherry-pick",
    "citool",
    "clean",
    "clone",
    "column",
    "commit",
    "commit-graph",
    "commit-tree",
    "config",
    "count-objects",
    "credential",
    "credential-cache",
    "credential-store",
    "cvsexportcommit",
    "cvsimport",
    "cvsserver",
    "daemon",
    "describe",
    "diagnose",
    "diff",
    "diff-files",
    "diff-index",
    "diff-tree",
    "difftool",
    "fast-export",
    "fast-import",
    "fetch",
    "fetch-pack",
    "filter-branch",
    "fmt-merge-msg",
    "for-each-ref",
    "for-each-repo",
    "format-patch",
    "fsck",
    "gc",
    "get-tar-commit-id",
    "gitk",
    "gitweb",
    "grep",
    "gui",
    "hash-object",
    "help",
    "hook",
    "http-backend",
    "imap-send",
    "index-pack",
    "init",
    "instaweb",
    "interpret-trailers",
    "log",
    "ls-files",
    "ls-remote",
    "ls-tree",
    "mailinfo",
    "mailsplit",
    "maintenance",
    "merge",
    "merge-base",
    "merge-file",
    "merge-index",
    "merge-one-file",
    "merge-tree",
    "mergetool",
    "mktag",
    "mktree",
    "multi-pack-index",
    "mv",
    "name-rev",
    "notes",
    "p4",
    "pack-objects",
    "pack-redundant",
    "pack-refs",
    "patch-id",
    "prune",
    "prune-packed",
    "pull",
    "push",
    "quiltimport",
    "range-diff",
    "read-tree",
    "rebase",
    "reflog",
    "refs",
    "remote",
    "repack",
    "replace",
    "replay",
    "request-pull",
    "rerere",
    "reset",
    "restore",
    "rev-list",
    "rev-parse",
    "revert",
    "rm",
    "scalar",
    "send-email",
    "send-pack",
    "sh-i18n",
    "sh-setup",
    "shortlog",
    "show",
    "show-branch",
    "show-index",
    "show-ref",
    "sparse-checkout",
    "stage",
    "stash",
    "status",
    "stripspace",
    "submodule",
    "svn",
    "switch",
    "symbolic-ref",
    "tag",
    "unpack-file",
    "unpack-objects",
    "update-index",
    "update-ref",
    "update-server-info",
    "upload-archive",
    "upload-pack",
    "var",
    "verify-commit",
    "verify-pack",
    "verify-tag",
    "version",
    "whatchanged",
    "worktree",
    "write-tree",
];

pub(crate) fn is_subcommand(name: &str) -> bool {
    SUBCOMMANDS.contains(&name)
}

/// Global options that change neither which subcommand runs nor which
/// configuration is read (their values, if any, are in `GIT_VALUED`).
pub(crate) fn known_global(name: &str) -> bool {
    matches!(
        name,
        "-C" | "--git-dir"
            | "--work-tree"
            | "--namespace"
            | "--attr-source"
            | "--super-prefix"
            | "-p"
            | "--paginate"
            | "-P"
            | "--no-pager"
            | "--bare"
            | "--no-replace-objects"
            | "--no-lazy-fetch"
            | "--no-optional-locks"
            | "--no-advice"
            | "--literal-pathspecs"
            | "--glob-pathspecs"
            | "--noglob-pathspecs"
            | "--icase-pathspecs"
            | "--version"
            | "--help"
            | "-v"
            | "-h"
    )
}

/// A `-c key=value` that can neither define an alias, load more
/// configuration, nor name a program: only a few display settings.
pub(crate) fn inert_command_line_key(assignment: &str) -> bool {
    let key = assignment
        .split('=')
        .next()
        .unwrap_or(assignment)
        .trim()
        .to_ascii_lowercase();
    let section = key.split('.').next().unwrap_or("");
    matches!(section, "color" | "advice" | "user")
        || matches!(
            key.as_str(),
            "core.quotepath" | "core.abbrev" | "log.date" | "log.decorate" | "diff.renames"
        )
}
