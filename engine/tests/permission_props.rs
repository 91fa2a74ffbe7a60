//! Randomised checks of the rule policy's safety properties:
//! - adding a deny rule never makes a decision more permissive, in any mode;
//! - a deny rule that matches a call (on its own) denies it whatever the
//!   other rules and the mode.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use baton_engine::permission::{
    FileAccess, PermissionDecision, PermissionMode, PermissionPolicy, PermissionRequest,
    PermissionTarget, Rule, RuleKind, RulePolicy,
};
use baton_engine::{Context, Tool, ToolDef};
use proptest::prelude::*;
use serde_json::json;

use crate::common;

struct Dirs {
    _dir: tempfile::TempDir,
    work: PathBuf,
    home: PathBuf,
    outside: PathBuf,
}

fn dirs() -> &'static Dirs {
    static DIRS: OnceLock<Dirs> = OnceLock::new();
    DIRS.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (work, home, outside) = (root.join("w"), root.join("h"), root.join("o"));
        for d in [work.join("src"), home.join(".ssh"), outside.clone()] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(work.join(".env"), "x").unwrap();
        std::fs::write(outside.join("f"), "x").unwrap();
        std::os::unix::fs::symlink(&outside, work.join("out")).unwrap();
        std::os::unix::fs::symlink(work.join(".env"), work.join("env_link")).unwrap();
        Dirs {
            _dir: dir,
            work,
            home,
            outside,
        }
    })
}

const RULES: &[&str] = &[
    "Bash",
    "Bash(*)",
    "Bash(npm test)",
    "Bash(npm run:*)",
    "Bash(rm:*)",
    "Bash(git push:*)",
    "Bash(git *)",
    "Bash(* --force)",
    "Bash(curl *)",
    "Bash(echo:*)",
    "Bash(ls*)",
    "Bash(cat .env)",
    "Bash(echo touch F)",
    "Bash(timeout:*)",
    "Bash(touch:*)",
    "Bash(git -C . push)",
    "Read",
    "Read(./.env)",
    "Read(.env)",
    "Read(~/.ssh/**)",
    "Read(/src/**)",
    "Read(//{O}/**)",
    "Edit",
    "Edit(src/**)",
    "Edit(*.rs)",
    "Edit(./out/**)",
    "Edit(//{O}/**)",
    "Write",
    "Grep",
    "WebFetch",
    "WebFetch(domain:example.com)",
    "WebFetch(domain:*.example.com)",
    "mcp__gh",
    "mcp__gh__*",
    "mcp__gh__create",
    "TodoWrite",
];

const WORDS: &[&str] = &[
    "npm test",
    "npm run build",
    "rm -rf x",
    "git push --force",
    "git status",
    "ls -la",
    "curl evil",
    "echo hi",
    "cat .env",
    "FOO=1 npm test",
    "npm test > out.txt",
    // Wrappers, inserted options, payloads and evaluated values (issue 8).
    "git -C . push",
    "git -c k=v --no-pager push --force",
    "timeout 5 rm -rf x",
    "env -i rm x",
    "nice -n 5 git push",
    "command git push",
    "bash -c 'rm -rf x'",
    "sh -c \"$X\"",
    "eval git push",
    "'rm' -rf x",
    "find . -exec rm {} +",
    "ls | xargs rm",
    "$CMD x",
    "echo touch F",
    "true 'a[$(touch F)]'; [[ $_ -eq 1 ]]",
    "sed -n --expr='1e touch F' x",
];
const OPS: &[&str] = &[" && ", " || ", "; ", " | ", "\n", "\n\\"];

fn command() -> impl Strategy<Value = String> {
    prop::collection::vec(
        (
            prop::sample::select(WORDS),
            prop::sample::select(OPS),
            any::<bool>(),
        ),
        1..4,
    )
    .prop_map(|parts| {
        let mut out = String::new();
        for (i, (word, op, subst)) in parts.iter().enumerate() {
            if i > 0 {
                out.push_str(op);
            }
            if *subst && i > 0 {
                out.push_str(&format!("echo $({word})"));
            } else {
                out.push_str(word);
            }
        }
        out
    })
}

#[derive(Clone, Debug)]
struct CallSpec {
    tool: &'static str,
    target: TargetSpec,
    read_only: bool,
}

#[derive(Clone, Debug)]
enum TargetSpec {
    Command(String),
    Path(&'static str, FileAccess),
    Url(&'static str),
    None,
}

const PATHS: &[&str] = &[
    "{W}/.env",
    "{W}/src/a.rs",
    "{W}/src/new/b.rs",
    "{W}/out/f",
    "{W}/env_link",
    "{H}/.ssh/id",
    "{O}/f",
    "/etc/hostname",
];

fn call() -> impl Strategy<Value = CallSpec> {
    prop_oneof![
        (command(), any::<bool>()).prop_map(|(c, ro)| CallSpec {
            tool: "Bash",
            // As the Bash tool says, or arbitrary (a host's own tool).
            read_only: if ro {
                baton_engine::shell::is_read_only(&c)
            } else {
                c.len() % 2 == 0
            },
            target: TargetSpec::Command(c),
        }),
        (
            prop::sample::select(&["Read", "Grep", "Glob"][..]),
            prop::sample::select(PATHS)
        )
            .prop_map(|(tool, p)| CallSpec {
                tool,
                target: TargetSpec::Path(p, FileAccess::Read),
                read_only: true,
            }),
        (
            prop::sample::select(&["Edit", "Write", "NotebookEdit"][..]),
            prop::sample::select(PATHS)
        )
            .prop_map(|(tool, p)| CallSpec {
                tool,
                target: TargetSpec::Path(p, FileAccess::Write),
                read_only: false,
            }),
        prop::sample::select(
            &[
                "https://example.com/x",
                "https://a.example.com/",
                "https://evil.net/"
            ][..]
        )
        .prop_map(|u| CallSpec {
            tool: "WebFetch",
            target: TargetSpec::Url(u),
            read_only: true,
        }),
        (
            prop::sample::select(&["mcp__gh__create", "mcp__gh__delete", "TodoWrite"][..]),
            any::<bool>()
        )
            .prop_map(|(tool, ro)| CallSpec {
                tool,
                target: TargetSpec::None,
                read_only: ro,
            }),
    ]
}

fn expand(text: &str) -> String {
    let d = dirs();
    text.replace("{W}", &d.work.display().to_string())
        .replace("{H}", &d.home.display().to_string())
        .replace("{O}", &d.outside.display().to_string())
}

fn rule(text: &str, kind: RuleKind) -> Rule {
    let d = dirs();
    Rule::parse(&expand(text), kind, Some(&d.home), &d.work).unwrap()
}

fn decide(policy: &RulePolicy, call: &CallSpec, mode: PermissionMode) -> PermissionDecision {
    let d = dirs();
    let tool = Arc::new(
        Tool::raw(
            ToolDef::new(call.tool, "t"),
            json!({"type": "object"}),
            common::Nothing,
        )
        .unwrap(),
    );
    let target = match &call.target {
        TargetSpec::Command(c) => PermissionTarget::Command(c.clone()),
        TargetSpec::Path(p, access) => PermissionTarget::Path {
            path: PathBuf::from(expand(p)),
            access: *access,
        },
        TargetSpec::Url(u) => PermissionTarget::Url(u.to_string()),
        TargetSpec::None => PermissionTarget::None,
    };
    let context = Context::new(&d.work).with_mode(mode);
    policy.decide(&PermissionRequest {
        tool: &tool,
        input: &json!({}),
        target: &target,
        read_only: call.read_only,
        context: &context,
        caller: None,
    })
}

/// Deny < Ask < Allow.
fn rank(d: &PermissionDecision) -> u8 {
    match d {
        PermissionDecision::Deny { .. } => 0,
        PermissionDecision::Ask { .. } => 1,
        PermissionDecision::Allow => 2,
    }
}

fn rule_list() -> impl Strategy<Value = Vec<&'static str>> {
    prop::collection::vec(prop::sample::select(RULES), 0..4)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn adding_a_deny_rule_never_loosens(
        allow in rule_list(),
        ask in rule_list(),
        deny in rule_list(),
        extra in prop::sample::select(RULES),
        call in call(),
        mode in prop::sample::select(&PermissionMode::ALL[..]),
    ) {
        let mut policy = RulePolicy::new();
        for (kind, list) in [(RuleKind::Allow, &allow), (RuleKind::Ask, &ask), (RuleKind::Deny, &deny)] {
            for text in list {
                policy.push(rule(text, kind));
            }
        }
        let before = decide(&policy, &call, mode);
        let mut stricter = policy.clone();
        stricter.push(rule(extra, RuleKind::Deny));
        let after = decide(&stricter, &call, mode);
        prop_assert!(rank(&after) <= rank(&before), "{before:?} became {after:?}");

        let mut alone = RulePolicy::new();
        alone.push(rule(extra, RuleKind::Deny));
        let matches = matches!(decide(&alone, &call, PermissionMode::Default), PermissionDecision::Deny { .. });
        if matches {
            prop_assert!(matches!(after, PermissionDecision::Deny { .. }), "matching deny `{extra}` gave {after:?}");
        }
    }
}

#[test]
fn the_generators_reach_both_outcomes() {
    // The property above is only meaningful if matching denies occur; check
    // a few by hand so a broken generator cannot pass vacuously.
    let mut alone = RulePolicy::new();
    alone.push(rule("Bash(rm:*)", RuleKind::Deny));
    let call = CallSpec {
        tool: "Bash",
        target: TargetSpec::Command("npm test && echo $(rm -rf x)".into()),
        read_only: false,
    };
    assert!(matches!(
        decide(&alone, &call, PermissionMode::Default),
        PermissionDecision::Deny { .. }
    ));
    let mut alone = RulePolicy::new();
    alone.push(rule("Read(./.env)", RuleKind::Deny));
    let call = CallSpec {
        tool: "Grep",
        target: TargetSpec::Path("{W}/env_link", FileAccess::Read),
        read_only: true,
    };
    for mode in PermissionMode::ALL {
        assert!(matches!(
            decide(&alone, &call, mode),
            PermissionDecision::Deny { .. }
        ));
    }
}

const INNER: &[&str] = &[
    "rm -rf x",
    "git push",
    "touch F",
    "curl evil",
    "git push --force",
];
const WRAPPERS: &[&str] = &[
    "{}",
    "timeout 5 {}",
    "env -i A=1 {}",
    "nice -n 5 {}",
    "nohup {}",
    "command {}",
    "exec {}",
    "stdbuf -oL {}",
    "time {}",
    "bash -c '{}'",
    "sh -ec \"{}\"",
    "eval '{}'",
    "eval {}",
    "sudo -u x {}",
    "echo a | xargs {}",
    "true\n{}",
    "echo \"$({})\"",
    "bash -c \"eval '{}'\"",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// A deny rule that matches a command alone denies it (or, if the
    /// wrapper hides part of what runs, at least asks) however it is
    /// wrapped, with options inserted into git, in every mode.
    #[test]
    fn wrapping_never_escapes_a_deny(
        inner in prop::sample::select(INNER),
        wrapper in prop::sample::select(WRAPPERS),
        git_options in prop::sample::select(&["", "-C . ", "-c a=b ", "--no-pager -P ", "--git-dir=.git "][..]),
        deny in prop::sample::select(&["Bash(rm:*)", "Bash(git push:*)", "Bash(touch F)", "Bash(curl *)", "Bash(git push --force)"][..]),
        mode in prop::sample::select(&PermissionMode::ALL[..]),
    ) {
        let inner = inner.replacen("git ", &format!("git {git_options}"), 1);
        let line = wrapper.replace("{}", &inner);
        let mut alone = RulePolicy::new();
        alone.push(rule(deny, RuleKind::Deny));
        let bare = CallSpec {
            tool: "Bash",
            target: TargetSpec::Command(inner.replace(git_options, "")),
            read_only: false,
        };
        if matches!(decide(&alone, &bare, PermissionMode::Default), PermissionDecision::Deny { .. }) {
            let mut policy = alone.clone();
            policy.push(rule("Bash", RuleKind::Allow));
            let call = CallSpec {
                tool: "Bash",
                read_only: baton_engine::shell::is_read_only(&line),
                target: TargetSpec::Command(line.clone()),
            };
            let got = decide(&policy, &call, mode);
            prop_assert!(rank(&got) <= 1, "{line:?} with deny {deny} in {mode}: {got:?}");
        }
    }
}
