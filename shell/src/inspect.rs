//! Commands that inspect the system (sockets, interfaces, containers,
//! pull requests, the shell's own state) and are read-only in the forms
//! Claude Code also runs without asking.
//!
//! Claude Code's list (2.1.197, read from its binary: `ss`, `netstat`,
//! `lsof`, `ip addr`, `history`, `alias`, `docker ps`/`images`, the `gh`
//! viewing subcommands, `node`/`python --version`) is matched here form by
//! form, each with the options that make it write or run something shut
//! out: `ss --kill`, `ip -batch`, `history -w`, `gh --web` (starts a
//! browser). Anything not understood is not read-only.

use super::allowlist::short_has;

/// `ss`: every option is a display option except `-K`/`--kill` (closes
/// sockets) and `-D`/`--diag` (writes a raw dump to a file), and `-F`/
/// `--filter` reads a filter file (allowed: it only reads). Long options
/// are taken in full only: iproute2 uses getopt_long, so an abbreviation
/// could mean `--kill`; an unknown one is refused.
pub(crate) fn ss(args: &[&str]) -> bool {
    const SHORT: &str = "hVnralotuwxpiesmbE460HSOMZz";
    const LONG: &[&str] = &[
        "--help",
        "--version",
        "--numeric",
        "--resolve",
        "--all",
        "--listening",
        "--options",
        "--extended",
        "--memory",
        "--processes",
        "--info",
        "--tos",
        "--cgroup",
        "--tipcinfo",
        "--summary",
        "--events",
        "--context",
        "--contexts",
        "--ipv4",
        "--ipv6",
        "--packet",
        "--tcp",
        "--udp",
        "--dccp",
        "--raw",
        "--unix",
        "--sctp",
        "--vsock",
        "--tipc",
        "--xdp",
        "--mptcp",
        "--inet-sockopt",
        "--no-header",
        "--oneline",
        "--bpf",
        "--threads",
    ];
    args.iter().all(|a| {
        if a.starts_with("--") {
            LONG.contains(a)
        } else if let Some(cluster) = a.strip_prefix('-') {
            !cluster.is_empty() && cluster.chars().all(|c| SHORT.contains(c))
        } else {
            // Filter words (`state established`, `sport = :22`).
            true
        }
    })
}

/// `netstat` (net-tools) only displays; its options change what.
pub(crate) fn netstat(args: &[&str]) -> bool {
    args.iter()
        .all(|a| a.starts_with('-') || a.chars().all(|c| c.is_ascii_alphanumeric()))
}

/// `lsof` lists open files; it has no option that writes. (`+D dir` walks
/// a directory; the path check judges where.)
pub(crate) fn lsof(_args: &[&str]) -> bool {
    true
}

/// `ip [OPTIONS] OBJECT [show|list] [...]` for the objects that only have
/// viewing forms under `show`. Global options that read commands from a
/// file (`-batch`) or switch namespaces (`-netns`) are refused.
pub(crate) fn ip(args: &[&str]) -> bool {
    const OPTIONS: &[&str] = &[
        "-4",
        "-6",
        "-0",
        "-br",
        "-brief",
        "-c",
        "-color",
        "-s",
        "-stats",
        "-statistics",
        "-d",
        "-details",
        "-o",
        "-oneline",
        "-j",
        "-json",
        "-p",
        "-pretty",
        "-h",
        "-human",
    ];
    const OBJECTS: &[&str] = &[
        "a",
        "addr",
        "address",
        "l",
        "link",
        "r",
        "ro",
        "route",
        "n",
        "neigh",
        "neighbour",
        "neighbor",
    ];
    let mut rest = args;
    while let Some((first, tail)) = rest.split_first() {
        if !first.starts_with('-') {
            break;
        }
        if !OPTIONS.contains(first) {
            return false;
        }
        rest = tail;
    }
    match rest {
        [object] => OBJECTS.contains(object),
        [object, verb, ..] => {
            OBJECTS.contains(object)
                && matches!(*verb, "show" | "list" | "ls" | "lst" | "sh")
                && rest
                    .iter()
                    .all(|a| !a.starts_with('-') || OPTIONS.contains(a))
        }
        _ => false,
    }
}

/// `history` lists; `-c`, `-d`, `-w`, `-a`, `-r`, `-n`, `-s` change the
/// list or read and write files. A count alone is fine.
pub(crate) fn history(args: &[&str]) -> bool {
    match args {
        [] => true,
        [n] => n.chars().all(|c| c.is_ascii_digit()),
        _ => false,
    }
}

/// `alias` with no arguments, `-p`, or names prints; `name=value` defines
/// an alias, which changes what later words of the line run.
pub(crate) fn alias(args: &[&str]) -> bool {
    args.iter()
        .all(|a| *a == "-p" || (!a.starts_with('-') && !a.contains('=')))
}

/// `node`, `python`, `python3` asked for their version and nothing else.
/// The short spellings differ: `node -v` is the version, but `python -v`
/// is verbose mode, which runs a script read from stdin (`echo … | python
/// -v` would run anything).
pub(crate) fn version_probe(program: &str, args: &[&str]) -> bool {
    match program {
        "node" => matches!(args, ["--version"] | ["-v"]),
        _ => matches!(args, ["--version"] | ["-V"]),
    }
}

/// `docker ps` and `docker images` with display options (a `--format`
/// template is rendered by the client; Go templates cannot run programs).
/// Global options (`-H`, `--config`, `--context`) are refused: they pick
/// another daemon or client configuration.
pub(crate) fn docker(args: &[&str]) -> bool {
    const DISPLAY: &[&str] = &[
        "-a",
        "--all",
        "-q",
        "--quiet",
        "--no-trunc",
        "-s",
        "--size",
        "--digests",
        "-l",
        "--latest",
        "-n",
        "--last",
        "-f",
        "--filter",
        "--format",
        "--tree",
    ];
    let Some((sub, rest)) = args.split_first() else {
        return false;
    };
    if !matches!(*sub, "ps" | "images") {
        return false;
    }
    let mut iter = rest.iter();
    while let Some(arg) = iter.next() {
        let name = arg.split_once('=').map_or(*arg, |(n, _)| n);
        if let Some(flags) = name.strip_prefix('-') {
            let cluster = !flags.starts_with('-')
                && flags.len() > 1
                && flags.chars().all(|c| "aqsl".contains(c));
            if !DISPLAY.contains(&name) && !cluster {
                return false;
            }
            // Options with a value take the next word unless glued.
            if !arg.contains('=')
                && matches!(name, "-n" | "--last" | "-f" | "--filter" | "--format")
            {
                iter.next();
            }
        } else if *sub == "ps" {
            // `docker ps` takes no operands.
            return false;
        }
    }
    true
}

/// The `gh` subcommands that only show things, without `--web` (which
/// starts a browser) and without an abbreviation of it (`gh` uses pflag,
/// which takes long options in full only; `-w` is the short form).
pub(crate) fn gh(args: &[&str]) -> bool {
    const VIEWERS: &[(&str, &[&str])] = &[
        ("auth", &["status"]),
        ("issue", &["list", "status", "view"]),
        ("label", &["list"]),
        ("pr", &["checks", "diff", "list", "status", "view"]),
        ("release", &["list", "view"]),
        ("repo", &["view"]),
        ("run", &["list", "view"]),
        ("search", &["code", "commits", "issues", "prs", "repos"]),
        ("workflow", &["list", "view"]),
    ];
    let [group, verb, rest @ ..] = args else {
        return false;
    };
    let known = VIEWERS
        .iter()
        .any(|(g, verbs)| g == group && verbs.contains(verb));
    known
        && rest.iter().all(|a| {
            let name = a.split_once('=').map_or(*a, |(n, _)| n);
            name != "--web" && !short_has(name, 'w')
        })
}

#[cfg(test)]
mod tests {
    use crate::is_read_only;

    #[test]
    fn viewing_forms_are_read_only() {
        for line in [
            "ss -tlnp",
            "ss -a state established",
            "ss --tcp --listening",
            "netstat -tulpn",
            "lsof -i :8080",
            "ip addr",
            "ip -br a show dev lo",
            "ip route show",
            "history",
            "history 20",
            "alias",
            "alias ll",
            "node --version",
            "node -v",
            "python -V",
            "python3 --version",
            "docker ps -a --format '{{.ID}}'",
            "docker images -q",
            "gh pr view 12 --comments",
            "gh pr list -R owner/repo",
            "gh issue view 3 --json title",
            "gh run list --limit 5",
        ] {
            assert!(is_read_only(line), "{line}");
        }
    }

    #[test]
    fn forms_that_write_or_run_are_not() {
        for line in [
            "ss -K dst 10.0.0.1",
            "ss --kill",
            "ss -D dump.bin",
            "ss --diag=dump.bin",
            "ss --ki",
            "ip addr add 10.0.0.2/24 dev eth0",
            "ip link set lo down",
            "ip -batch cmds.txt",
            "ip -netns other addr",
            "ip route flush all",
            "history -c",
            "history -w out.txt",
            "history -d 3",
            "alias ls='rm -rf'",
            "node -e 'require(\"fs\").writeFileSync(\"x\",\"\")'",
            "python3 -c 'open(\"x\",\"w\")'",
            "python3 --version -c 1",
            "echo 'import os' | python3 -v",
            "python -v",
            "docker run alpine",
            "docker ps -H tcp://evil:2375",
            "docker --config /tmp/x ps",
            "docker images --output x",
            "gh pr view 12 --web",
            "gh pr view 12 -w",
            "gh pr checkout 12",
            "gh api repos/o/r",
            "gh pr merge 12",
            "gh extension install x/y",
        ] {
            assert!(!is_read_only(line), "{line}");
        }
    }
}
