//! The holes of the second review (issue 20, section 3) decided by the rule
//! policy in every permission mode, with `read_only` computed by the shell
//! classifier as the Bash tool does.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use baton_engine::permission::{
    AskSource, PermissionDecision, PermissionMode, PermissionPolicy, PermissionRequest,
    PermissionTarget, RulePolicy,
};
use baton_engine::{Context, Tool, ToolDef};
use serde_json::json;

use crate::common;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Want {
    Allow,
    /// Asks because of the mode's default (outside the workspace).
    Ask,
    /// Asks because of a rule (a deny or ask rule that may match).
    AskRule,
    Deny,
}
use Want::*;

const MODES: [PermissionMode; 5] = [
    PermissionMode::Default,
    PermissionMode::AcceptEdits,
    PermissionMode::Plan,
    PermissionMode::DontAsk,
    PermissionMode::BypassPermissions,
];

/// A read-only command that reaches outside: every mode asks (dontAsk
/// denies), bypass runs it.
const OUTSIDE: [Want; 5] = [Ask, Ask, Ask, Deny, Allow];
const ALLOWED: [Want; 5] = [Allow; 5];
const DENIED: [Want; 5] = [Deny; 5];

struct Rules<'a> {
    allow: &'a [&'a str],
    ask: &'a [&'a str],
    deny: &'a [&'a str],
}

const NONE: Rules<'static> = Rules {
    allow: &[],
    ask: &[],
    deny: &[],
};

fn decide(work: &Path, cwd: &Path, rules: &Rules, cmd: &str, mode: PermissionMode) -> Want {
    let policy = RulePolicy::parse(rules.allow, rules.ask, rules.deny, None, work).unwrap();
    let tool = Arc::new(
        Tool::raw(
            ToolDef::new("Bash", "t"),
            json!({"type": "object"}),
            common::Nothing,
        )
        .unwrap(),
    );
    let target = PermissionTarget::Command(cmd.to_string());
    let context = Context::new(cwd)
        .with_roots(vec![work.to_path_buf()])
        .with_mode(mode);
    match policy.decide(&PermissionRequest {
        tool: &tool,
        input: &json!({}),
        target: &target,
        read_only: baton_engine::shell::is_read_only(cmd),
        context: &context,
        caller: None,
    }) {
        PermissionDecision::Allow => Allow,
        PermissionDecision::Deny { .. } => Deny,
        PermissionDecision::Ask {
            source: AskSource::Rule,
            ..
        } => AskRule,
        PermissionDecision::Ask { .. } => Ask,
    }
}

fn table(work: &Path, rules: &Rules, rows: &[(&str, [Want; 5])]) {
    let mut wrong = Vec::new();
    for (cmd, wants) in rows {
        for (mode, want) in MODES.iter().zip(wants) {
            let got = decide(work, work, rules, cmd, *mode);
            if got != *want {
                wrong.push(format!("{cmd:?} in {mode}: want {want:?}, got {got:?}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// `top/{w,out}`: the workspace `w` holds `.env`, `src/a.rs`,
/// `src/deep/`, a link `link_out -> ../out` and a link `deeplink ->
/// src/deep`; `out/secret` is outside.
fn layout() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let top = dir.path().canonicalize().unwrap();
    let (work, out) = (top.join("w"), top.join("out"));
    std::fs::create_dir_all(work.join("src/deep")).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("secret"), "s").unwrap();
    std::fs::write(work.join("src/a.rs"), "a").unwrap();
    std::fs::write(work.join(".env"), "KEY=1").unwrap();
    std::os::unix::fs::symlink(&out, work.join("link_out")).unwrap();
    std::os::unix::fs::symlink(work.join("src/deep"), work.join("deeplink")).unwrap();
    (dir, work)
}

/// Hole 4: redirections that belong to no simple command.
#[test]
fn compound_redirections_are_checked_like_arguments() {
    let (_dir, work) = layout();
    table(
        &work,
        &NONE,
        &[
            ("{ cat; } < ../out/secret", OUTSIDE),
            ("( cat ) < ../out/secret", OUTSIDE),
            ("if true; then cat; fi < ../out/secret", OUTSIDE),
            ("for x in 1; do cat; done < ../out/secret", OUTSIDE),
            ("case a in a) cat;; esac < link_out/secret", OUTSIDE),
            ("echo \"$(<../out/secret)\"", OUTSIDE),
            ("echo $(< link_out/secret)", OUTSIDE),
            ("{ cat; } < \"$f\"", OUTSIDE),
            ("{ cat; } < src/a.rs", ALLOWED),
            ("echo \"$(<src/a.rs)\"", ALLOWED),
        ],
    );
}

/// Hole 5: `cd` is logical in bash.
#[test]
fn cd_is_judged_the_way_bash_resolves_it() {
    let (_dir, work) = layout();
    table(
        &work,
        &NONE,
        &[
            // Logically `deeplink/../..` is the parent of the workspace.
            ("cd deeplink/../.. && cat out/secret", OUTSIDE),
            ("cd deeplink/../.. && ls", OUTSIDE),
            ("cd -L deeplink/../.. && ls", OUTSIDE),
            ("cd src/deep/../../.. && ls", OUTSIDE),
            ("cd link_out/.. && ls", OUTSIDE),
            // Physically it is `src`, inside.
            ("cd -P deeplink/../.. && ls", ALLOWED),
            ("cd src/deep/.. && ls", ALLOWED),
            ("cd -- src && cat a.rs", ALLOWED),
            ("cd -P -- src && ls", ALLOWED),
            ("cd -x src", OUTSIDE),
        ],
    );
}

/// Hole 6: recursive readers that follow links walk out of the workspace.
#[test]
fn link_following_recursion_reads_anywhere() {
    let (_dir, work) = layout();
    table(
        &work,
        &NONE,
        &[
            ("grep -R x .", OUTSIDE),
            ("grep -rR x src", OUTSIDE),
            ("grep --dereference-recursive x", OUTSIDE),
            ("grep --deref x .", OUTSIDE),
            ("grep {-R,x} .", OUTSIDE),
            ("egrep -iR x .", OUTSIDE),
            ("rg -L x", OUTSIDE),
            ("rg --follow x", OUTSIDE),
            ("find -L . -name x", OUTSIDE),
            ("find . -follow", OUTSIDE),
            ("ls -RL", OUTSIDE),
            ("ls -lR --dereference src", OUTSIDE),
            ("du -L .", OUTSIDE),
            ("du --dereference -s", OUTSIDE),
            ("tree -l", OUTSIDE),
            ("diff -r src src", OUTSIDE),
            ("diff --recursive src src", OUTSIDE),
            ("grep -r x .", ALLOWED),
            ("rg x", ALLOWED),
            ("find . -name x", ALLOWED),
            ("ls -R", ALLOWED),
            ("du -sh .", ALLOWED),
            ("diff -r --no-dereference src src", ALLOWED),
        ],
    );
}

/// Hole 1 at the policy: a file named like an option, reached by a glob.
#[test]
fn globs_that_match_option_names_ask() {
    let (_dir, work) = layout();
    std::fs::write(work.join("src/-R"), "").unwrap();
    table(
        &work,
        &NONE,
        &[
            ("cd src && grep x *", OUTSIDE),
            ("grep x src/*", ALLOWED),
            ("cat src/a*", ALLOWED),
        ],
    );
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

/// Hole 8: a repository that starts above the workspace.
#[test]
fn git_reads_only_inside_a_repository_within_the_workspace() {
    let (dir, work) = layout();
    let top = dir.path().canonicalize().unwrap();
    git(&top, &["init", "-q"]);
    let reads = [
        "git log",
        "git log -p",
        "git status",
        "git show HEAD:out/secret",
        "git cat-file -p HEAD:out/secret",
        "git grep x -- :/",
        "git ls-files",
        "git diff HEAD",
        "git blame out/secret",
    ];
    let rows: Vec<(&str, [Want; 5])> = reads.iter().map(|c| (*c, OUTSIDE)).collect();
    table(&work, &NONE, &rows);
    // The same commands in a repository of the workspace's own.
    let inner = work.join("src");
    git(&inner, &["init", "-q"]);
    let mut wrong = Vec::new();
    for cmd in ["git log", "git status", "git ls-files"] {
        for mode in MODES {
            let got = decide(&work, &inner, &NONE, cmd, mode);
            if got != Allow {
                wrong.push(format!("{cmd:?} in {mode}: want Allow, got {got:?}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Hole 9: configuration that may rename a subcommand makes it unknown,
/// so deny and ask rules on git subcommands ask.
#[test]
fn git_configuration_hides_the_subcommand_from_rules() {
    let (_dir, work) = layout();
    let deny = Rules {
        allow: &[],
        ask: &[],
        deny: &["Bash(git push:*)"],
    };
    let hidden = [AskRule, AskRule, Deny, Deny, AskRule];
    table(
        &work,
        &deny,
        &[
            ("git -c alias.st=push st", hidden),
            ("git -c include.path=/dev/stdin st", hidden),
            ("git -c includeIf.onbranch:main.path=/tmp/x st", hidden),
            ("git -c core.pager=sh log", hidden),
            ("git --config-env=alias.st=X st", hidden),
            (
                "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.st GIT_CONFIG_VALUE_0=push git st",
                hidden,
            ),
            ("env GIT_CONFIG_GLOBAL=/tmp/x git st", hidden),
            ("HOME=/tmp/x git st", hidden),
            // A name git does not have may be an alias in ~/.gitconfig.
            ("git st", hidden),
            ("git --exec-path=/tmp push", hidden),
            ("git push", DENIED),
            ("git -c color.ui=never push origin", DENIED),
            ("git -C . push", DENIED),
        ],
    );
    let ask = Rules {
        allow: &[],
        ask: &["Bash(git push:*)"],
        deny: &[],
    };
    table(
        &work,
        &ask,
        &[
            (
                "git -c alias.st=push st",
                [AskRule, AskRule, Deny, Deny, Allow],
            ),
            ("git st", [AskRule, AskRule, Deny, Deny, Allow]),
        ],
    );
}

/// Also: Read deny rules hold for shell commands without a sandbox.
#[test]
fn read_deny_rules_cover_bash_reads() {
    let (_dir, work) = layout();
    let deny = Rules {
        allow: &[],
        ask: &[],
        deny: &["Read(.env)"],
    };
    let unsure = [AskRule, AskRule, AskRule, Deny, AskRule];
    // A rule on a home path, reached through `~`.
    if let Some(home) = std::env::var("HOME").ok().filter(|h| h.starts_with('/')) {
        let rule = format!("Read(/{}/.baton-test-secret)", home.trim_end_matches('/'));
        let home_rule = Rules {
            allow: &[],
            ask: &[],
            deny: &[rule.as_str()],
        };
        table(
            &work,
            &home_rule,
            &[
                ("cat ~/.baton-test-secret", DENIED),
                ("head -n1 < ~/.baton-test-secret", DENIED),
                // The shell's HOME may differ from Baton's: other `~` paths ask.
                ("cat ~/other", [AskRule, AskRule, AskRule, Deny, AskRule]),
            ],
        );
    }
    table(
        &work,
        &deny,
        &[
            ("cat .env", DENIED),
            ("grep x .env", DENIED),
            ("head < .env", DENIED),
            ("cat ./.env", DENIED),
            ("cat \"$PWD/.env\"", DENIED),
            ("cat ${PWD}/.env", DENIED),
            ("cat .e*", DENIED),
            ("cat .en?", DENIED),
            ("cat {x,.env}", DENIED),
            ("cat src/../.env", DENIED),
            ("cd src && cat ../.env", DENIED),
            ("{ cat; } < .env", DENIED),
            ("echo \"$(<.env)\"", DENIED),
            ("cp .env /tmp/x", DENIED),
            ("grep -f.env x", DENIED),
            ("grep --file=.env x", DENIED),
            ("timeout 5 cat .env", DENIED),
            ("bash -c 'cat .env'", DENIED),
            ("cat $F", unsure),
            ("cat \"$(ls)\"", unsure),
            ("cd \"$d\" && cat x", unsure),
            // Readers that walk directories may meet `.env`.
            ("grep -r x .", unsure),
            ("grep -R x src", unsure),
            ("rg x", unsure),
            ("diff -r src src", unsure),
            ("git diff", unsure),
            ("git log -p", unsure),
            ("git show HEAD", unsure),
            ("git grep x", unsure),
            ("git status", ALLOWED),
            ("git log --oneline", ALLOWED),
            ("grep x src/a.rs", ALLOWED),
            ("cat src/a.rs", ALLOWED),
            ("cat .envrc", ALLOWED),
            ("echo .env", ALLOWED),
        ],
    );
}

/// Hole 9 for hooks: an `if:` naming a git subcommand runs its hook when
/// configuration may have renamed the subcommand.
#[test]
fn hook_if_filters_run_when_the_git_subcommand_is_unknowable() {
    let (_dir, work) = layout();
    let filter =
        baton_engine::hooks::matching::IfFilter::parse("Bash(git push:*)", None, &work).unwrap();
    let tool = Arc::new(
        Tool::raw(
            ToolDef::new("Bash", "t"),
            json!({"type": "object"}),
            common::Nothing,
        )
        .unwrap(),
    );
    let context = Context::new(&work).with_roots(vec![work.clone()]);
    let fires = |cmd: &str| {
        let target = PermissionTarget::Command(cmd.to_string());
        filter.matches(&PermissionRequest {
            tool: &tool,
            input: &json!({}),
            target: &target,
            read_only: baton_engine::shell::is_read_only(cmd),
            context: &context,
            caller: None,
        })
    };
    for cmd in [
        "git push",
        "git -c alias.st=push st",
        "git -c include.path=/dev/stdin st",
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.st GIT_CONFIG_VALUE_0=push git st",
        "git st",
    ] {
        assert!(fires(cmd), "{cmd:?}: the guard hook must run");
    }
    for cmd in ["git log", "git -c color.ui=never status", "ls"] {
        assert!(!fires(cmd), "{cmd:?}: the guard hook has nothing to guard");
    }
}

/// Holes 1, 2, 3 and 7 in every mode: lines that are no longer read-only
/// ask in default and acceptEdits, are refused in plan and dontAsk, and
/// run only in bypassPermissions.
#[test]
fn lines_that_are_not_read_only_are_refused_in_plan_mode() {
    let (_dir, work) = layout();
    let changes = [Ask, Ask, Deny, Deny, Allow];
    table(
        &work,
        &NONE,
        &[
            ("test {-v,'a[$(touch F)]'}", changes),
            ("[ {-v,'a[$(touch F)]'} ]", changes),
            ("test -n $x", changes),
            ("cat <<EOF\n$(echo \"\nEOF\ntouch F\n\")\nEOF\n", changes),
            ("cat <<EOF\n$(echo '\nEOF\ntouch F\n')\nEOF\n", changes),
            ("printf %n PATH", changes),
            ("printf -v __baton_status x", changes),
            ("for __baton_rc in 1; do :; done", changes),
            ("read IFS < src/a.rs", changes),
            ("{ ls; } > out.txt", changes),
            ("while :; do break; done > out.txt", changes),
            ("jq -n 'import \"x\" as $x {search: \"/\"}; $x'", changes),
            ("sed 'r /etc/passwd' src/a.rs", changes),
            ("sort -o out src/a.rs", changes),
            ("wc --files0-from=list", changes),
            ("sha256sum -c SUMS", changes),
            ("git -c include.path=/dev/stdin log", changes),
        ],
    );
}
