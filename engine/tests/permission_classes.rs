//! Issue 8's rule-matching classes, decided by the rule policy in every mode
//! where they apply, with `read_only` computed by the shell classifier as
//! the Bash tool does. Each row was decided more loosely before the fix.

use std::path::PathBuf;
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
    Ask,
    AskRule,
    Deny,
    /// Ask or deny: a matching deny rule may also catch it.
    Refused,
}
use Want::*;

fn decide(
    work: &PathBuf,
    allow: &[&str],
    ask: &[&str],
    deny: &[&str],
    cmd: &str,
    mode: PermissionMode,
) -> Want {
    let policy = RulePolicy::parse(allow, ask, deny, None, work).unwrap();
    let tool = Arc::new(
        Tool::raw(
            ToolDef::new("Bash", "t"),
            json!({"type": "object"}),
            common::Nothing,
        )
        .unwrap(),
    );
    let target = PermissionTarget::Command(cmd.to_string());
    let context = Context::new(work).with_mode(mode);
    let decision = policy.decide(&PermissionRequest {
        tool: &tool,
        input: &json!({}),
        target: &target,
        read_only: baton_engine::shell::is_read_only(cmd),
        context: &context,
        caller: None,
    });
    match decision {
        PermissionDecision::Allow => Allow,
        PermissionDecision::Deny { .. } => Deny,
        PermissionDecision::Ask {
            source: AskSource::Rule,
            ..
        } => AskRule,
        PermissionDecision::Ask { .. } => Ask,
    }
}

/// (default, acceptEdits, plan, dontAsk) for each command.
fn table(allow: &[&str], ask: &[&str], deny: &[&str], rows: &[(&str, [Want; 4])]) {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().canonicalize().unwrap();
    let modes = [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::Plan,
        PermissionMode::DontAsk,
    ];
    let mut wrong = Vec::new();
    for (cmd, wants) in rows {
        for (mode, want) in modes.iter().zip(wants) {
            let got = decide(&work, allow, ask, deny, cmd, *mode);
            let ok = got == *want
                || (*want == Ask && got == AskRule)
                || (*want == Refused && got != Allow);
            if !ok {
                wrong.push(format!("{cmd:?} in {mode}: want {want:?}, got {got:?}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "allow={allow:?} ask={ask:?} deny={deny:?}\n{}",
        wrong.join("\n")
    );
}

const ASKS: [Want; 4] = [Ask, Ask, Deny, Deny];
const REFUSED: [Want; 4] = [Refused, Refused, Deny, Deny];
const ASK_RULE: [Want; 4] = [AskRule, AskRule, Deny, Deny];
const DENIED: [Want; 4] = [Deny, Deny, Deny, Deny];
const ALLOWED: [Want; 4] = [Allow, Allow, Allow, Allow];

/// Hole 1 at the policy: the review's example ran in default, plan and
/// dontAsk despite `deny Bash(touch:*)`.
#[test]
fn evaluated_values_are_not_auto_approved() {
    table(
        &[],
        &[],
        &["Bash(touch:*)"],
        &[
            ("true 'a[$(touch F)]'; [[ $_ -eq 1 ]]", REFUSED),
            ("for x in 'a[$(touch F)]'; do echo $((x)); done", REFUSED),
            ("echo ${a[$_]}", ASKS),
            ("test -v \"$_\"", ASKS),
            ("echo ${!_}", ASKS),
            ("echo ${_@P}", ASKS),
            ("echo ${x:$_}", ASKS),
            ("[[ 1 -eq 1 ]] && echo ${#x} ${a[0]} ${x:1}", ALLOWED),
        ],
    );
}

/// Hole 4: an exact rule must not match across a newline.
#[test]
fn rules_never_match_across_a_newline() {
    table(
        &["Bash(echo touch F)", "Bash(git status)", "Bash(ls -la)"],
        &[],
        &[],
        &[
            ("echo\ntouch F", ASKS),
            ("echo touch\nF", ASKS),
            ("git\nstatus", ASKS),
            ("ls\n-la", ASKS),
            ("echo touch F", ALLOWED),
        ],
    );
}

/// Hole 8: ask rules seen through git's global options, wrappers and
/// literal payloads.
#[test]
fn ask_rules_see_through_options_and_wrappers() {
    table(
        &[
            "Bash(git:*)",
            "Bash(timeout:*)",
            "Bash(env:*)",
            "Bash(bash:*)",
            "Bash(eval:*)",
            "Bash(nice:*)",
            "Bash(xargs:*)",
        ],
        &["Bash(git push:*)"],
        &[],
        &[
            ("git -C . push", ASK_RULE),
            ("git -c k=v --no-pager push", ASK_RULE),
            ("git --git-dir=.git --work-tree . push origin", ASK_RULE),
            ("git -P push", ASK_RULE),
            ("'git' \"push\"", ASK_RULE),
            ("g\\it pu\\sh", ASK_RULE),
            ("/usr/bin/git push", ASK_RULE),
            ("timeout 5 git push", ASK_RULE),
            ("timeout -s KILL 5 git -C . push", ASK_RULE),
            ("env -i A=1 git push", ASK_RULE),
            ("command git push", ASK_RULE),
            ("nice -n 5 git push", ASK_RULE),
            ("nohup git push", ASK_RULE),
            ("exec git push", ASK_RULE),
            ("stdbuf -oL git push", ASK_RULE),
            ("time git push", ASK_RULE),
            ("bash -c 'git push'", ASK_RULE),
            ("sh -ec \"git push --force\"", ASK_RULE),
            ("eval git push", ASK_RULE),
            ("eval 'git -C . push'", ASK_RULE),
            ("bash -c \"eval 'timeout 1 git push'\"", ASK_RULE),
            ("echo x | xargs git push", ASK_RULE),
            ("git -c alias.p=push p", ASK_RULE),
            ("bash -c \"$X\"", ASK_RULE),
            ("eval \"$X\"", ASK_RULE),
            ("$CMD push", ASK_RULE),
            ("git status", [Allow, Allow, Allow, Allow]),
            ("git -C . log", [Allow, Allow, Deny, Allow]),
        ],
    );
}

/// Hole 8 for deny rules, in every mode including bypassPermissions.
#[test]
fn deny_rules_see_through_wrappers() {
    let rows: &[(&str, [Want; 4])] = &[
        ("timeout 5 rm -rf x", DENIED),
        ("env rm x", DENIED),
        ("bash -c 'cd /; rm -rf x'", DENIED),
        ("find . -exec rm {} \\;", DENIED),
        ("command -p rm x", DENIED),
        ("builtin eval 'rm x'", DENIED),
        ("sudo -u root rm x", DENIED),
        ("r\"m\" x", DENIED),
        ("bash -c \"$X\"", ASKS),
        ("sh script.sh", ASKS),
        ("$CMD -rf x", ASKS),
        ("ls | xargs rm", DENIED),
        ("ls -la", ALLOWED),
    ];
    table(&["Bash(*)"], &[], &["Bash(rm:*)"], rows);
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().canonicalize().unwrap();
    for (cmd, wants) in rows {
        if wants == &DENIED {
            let got = decide(
                &work,
                &["Bash(*)"],
                &[],
                &["Bash(rm:*)"],
                cmd,
                PermissionMode::BypassPermissions,
            );
            assert_eq!(got, Deny, "{cmd:?} in bypassPermissions");
        }
    }
}

/// A wildcard allow rule for a wrapper does not allow whatever it wraps.
#[test]
fn allowing_a_wrapper_does_not_allow_its_payload() {
    table(
        &[
            "Bash(timeout:*)",
            "Bash(find:*)",
            "Bash(bash -c:*)",
            "Bash(timeout 9 make)",
        ],
        &[],
        &[],
        &[
            ("timeout 5 rm -rf x", ASKS),
            ("find . -exec rm {} \\;", ASKS),
            ("bash -c 'touch F'", ASKS),
            ("timeout 5 ls", [Allow, Allow, Deny, Allow]),
            ("find . -exec grep -l x {} +", [Allow, Allow, Deny, Allow]),
            ("timeout 9 make", [Allow, Allow, Deny, Allow]),
        ],
    );
}

/// Decides `cmd` (read-only per the classifier) with no rules, the session
/// in `cwd`, the workspace root `root`.
fn decide_in(
    root: &std::path::Path,
    cwd: &std::path::Path,
    cmd: &str,
    mode: PermissionMode,
) -> Want {
    assert!(
        baton_engine::shell::is_read_only(cmd),
        "{cmd:?} should be read-only"
    );
    let policy = RulePolicy::new();
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
        .with_roots(vec![root.to_path_buf()])
        .with_mode(mode);
    match policy.decide(&PermissionRequest {
        tool: &tool,
        input: &json!({}),
        target: &target,
        read_only: true,
        context: &context,
        caller: None,
    }) {
        PermissionDecision::Allow => Allow,
        PermissionDecision::Deny { .. } => Deny,
        PermissionDecision::Ask { .. } => Ask,
    }
}

/// (default, acceptEdits, plan, dontAsk) for a read-only command that must
/// ask: plan mode asks too (it is read-only), dontAsk denies.
const READ_ASKS: [Want; 4] = [Ask, Ask, Ask, Deny];

/// Hole 6: read-only commands reaching outside the workspace.
#[test]
fn read_only_commands_stay_inside_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let top = dir.path().canonicalize().unwrap();
    let (work, out) = (top.join("w"), top.join("out"));
    std::fs::create_dir_all(work.join("src/deep")).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("secret"), "s").unwrap();
    std::fs::write(work.join("src/a.rs"), "a").unwrap();
    std::os::unix::fs::symlink(&out, work.join("link_out")).unwrap();
    std::os::unix::fs::symlink(out.join("secret"), work.join("src/s")).unwrap();
    let modes = [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::Plan,
        PermissionMode::DontAsk,
    ];
    let rows: &[(&str, [Want; 4])] = &[
        ("cat ../out*/secret", READ_ASKS),
        ("cat ../o?t/secret", READ_ASKS),
        ("cat \"$PWD/../out/secret\"", READ_ASKS),
        ("cat $PWD/../out/secret", READ_ASKS),
        ("cat ${PWD%/*}/out/secret", READ_ASKS),
        ("cat {..,.}/out/secret", READ_ASKS),
        ("cat src/{a.rs,../../out/secret}", READ_ASKS),
        ("cd && cat .bashrc", READ_ASKS),
        ("cd ~ && ls", READ_ASKS),
        ("cd .. && ls", READ_ASKS),
        ("cat link_out/secret", READ_ASKS),
        ("cat link_*/secret", READ_ASKS),
        ("cat src/s", READ_ASKS),
        ("cat src/*", READ_ASKS),
        ("cd link_out && cat secret", READ_ASKS),
        ("grep -r x --file=../out/secret .", READ_ASKS),
        ("cat < ../out/secret", READ_ASKS),
        ("cat src/a.rs", ALLOWED),
        ("ls src/*.rs $PWD/src", ALLOWED),
        ("cd src && cat a.rs", ALLOWED),
        ("echo ../*", ALLOWED),
    ];
    let mut wrong = Vec::new();
    for (cmd, wants) in rows {
        for (mode, want) in modes.iter().zip(wants) {
            let got = decide_in(&work, &work, cmd, *mode);
            if got != *want {
                wrong.push(format!("{cmd:?} in {mode}: want {want:?}, got {got:?}"));
            }
        }
    }
    // From a subdirectory, `..` stays inside; after `cd ..` it may not.
    let deep = work.join("src/deep");
    for (cmd, want) in [
        ("cat ../a.rs", Allow),
        ("cd .. && cat ../../out/secret", Ask),
        ("cd ../.. && cat ../out/secret", Ask),
    ] {
        let got = decide_in(&work, &deep, cmd, PermissionMode::Default);
        if got != want {
            wrong.push(format!("{cmd:?} from src/deep: want {want:?}, got {got:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Hole 7, read side: git in a repository whose config runs programs.
#[test]
fn read_only_git_asks_where_the_repository_configures_programs() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().canonicalize().unwrap();
    let modes = [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::Plan,
        PermissionMode::DontAsk,
    ];
    std::fs::create_dir_all(work.join(".git")).unwrap();
    std::fs::write(
        work.join(".git/config"),
        "[core]\n\trepositoryformatversion = 0\n",
    )
    .unwrap();
    let nested = work.join("vendor/lib");
    std::fs::create_dir_all(nested.join(".git/modules/sub")).unwrap();
    std::fs::write(nested.join(".git/config"), "[core]\n\tbare = false\n").unwrap();
    for mode in modes {
        assert_eq!(decide_in(&work, &work, "git status", mode), Allow, "{mode}");
        assert_eq!(
            decide_in(&work, &nested, "git status", mode),
            Allow,
            "{mode}"
        );
    }
    let cases = [
        (work.join(".git/config"), "[core]\n\tfsmonitor = touch F\n"),
        (
            work.join(".git/config"),
            "[diff \"x\"]\n\ttextconv = sh -c 'touch F'\n",
        ),
        (work.join(".git/config"), "[include]\n\tpath = ../x\n"),
        (
            work.join(".git/config.worktree"),
            "[core]\n\tpager = touch F\n",
        ),
        (
            nested.join(".git/config"),
            "[filter \"x\"]\n\tclean = touch F\n",
        ),
        (
            nested.join(".git/modules/sub/config"),
            "[core]\n\tfsmonitor = touch F\n",
        ),
    ];
    for (file, text) in cases {
        let before = std::fs::read_to_string(&file).ok();
        std::fs::write(&file, text).unwrap();
        let cwd = if file.starts_with(&nested) {
            &nested
        } else {
            &work
        };
        for (mode, want) in modes.iter().zip(READ_ASKS) {
            for cmd in [
                "git status",
                "git log -p",
                "git diff",
                "ls && git show HEAD",
            ] {
                let got = decide_in(&work, cwd, cmd, *mode);
                assert_eq!(got, want, "{cmd} with {file:?} = {text:?} in {mode}");
            }
        }
        match before {
            Some(b) => std::fs::write(&file, b).unwrap(),
            None => std::fs::remove_file(&file).unwrap(),
        }
    }
}
