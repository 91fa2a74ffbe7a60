//! Property: for random workspace layouts with symlinks, no read-only Bash
//! command that the policy auto-approves names a path outside the roots.
//!
//! The ground truth is real bash: every auto-approved line is run with an
//! execution trace, and every word of every command it ran (after bash's
//! expansions: globs, braces, `$PWD`, `cd`) is resolved, symlinks included,
//! from the directory that command ran in.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;

use baton_engine::permission::{
    PermissionDecision, PermissionMode, PermissionPolicy, PermissionRequest, PermissionTarget,
    RulePolicy,
};
use baton_engine::{Context, Tool, ToolDef};
use proptest::prelude::*;
use serde_json::json;

use crate::common;

/// An entry of the workspace: a directory, a file, or a symlink to one of
/// a few targets inside or outside.
#[derive(Clone, Debug)]
enum Entry {
    Dir(&'static str),
    File(&'static str),
    Link(&'static str, &'static str),
}

const NAMES: &[&str] = &[
    "a",
    "b",
    "sub",
    "sub/c",
    "sub/d",
    "link1",
    "sub/link2",
    ".hid",
];
const TARGETS: &[&str] = &["{O}", "{O}/f", "{W}/a", "{W}/sub", "..", "../..", "{W}"];

fn entry() -> impl Strategy<Value = Entry> {
    prop_oneof![
        prop::sample::select(NAMES).prop_map(Entry::Dir),
        prop::sample::select(NAMES).prop_map(Entry::File),
        (prop::sample::select(NAMES), prop::sample::select(TARGETS))
            .prop_map(|(n, t)| Entry::Link(n, t)),
    ]
}

const PATHS: &[&str] = &[
    "a",
    "sub",
    "sub/c",
    "link1",
    "link1/f",
    "sub/link2",
    "sub/link2/f",
    "..",
    "../o",
    "../o/f",
    "*",
    "*/*",
    "l*",
    "l*/f",
    "sub/l*/*",
    "?ub/*",
    "{a,..}",
    "{sub,../o}/f",
    "$PWD",
    "$PWD/..",
    "\"$PWD/link1\"",
    ".h*",
    ".*",
    "sub/../..",
    "./link1/..",
];
const SHAPES: &[&str] = &[
    "cat P",
    "ls P",
    "ls -la P Q",
    "head -n1 P",
    "wc -l P Q",
    "grep -r x P",
    "cd P && ls Q",
    "cd P && cat Q",
    "stat P",
    "find P -name x",
    "cat < P",
];

fn line() -> impl Strategy<Value = String> {
    (
        prop::sample::select(SHAPES),
        prop::sample::select(PATHS),
        prop::sample::select(PATHS),
    )
        .prop_map(|(shape, p, q)| shape.replace('P', p).replace('Q', q))
}

fn build(root: &Path, entries: &[Entry]) -> (PathBuf, PathBuf) {
    let work = root.join("w");
    let out = root.join("o");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("f"), "secret").unwrap();
    let expand = |t: &str| {
        t.replace("{O}", &out.display().to_string())
            .replace("{W}", &work.display().to_string())
    };
    for e in entries {
        let (name, made) = match e {
            Entry::Dir(n) => (n, std::fs::create_dir_all(work.join(n)).is_ok()),
            Entry::File(n) => (n, std::fs::write(work.join(n), "x").is_ok()),
            Entry::Link(n, t) => (
                n,
                std::os::unix::fs::symlink(expand(t), work.join(n)).is_ok(),
            ),
        };
        let _ = (name, made); // clashes (a file where a directory is) are fine
    }
    (work, out)
}

fn auto_approved(work: &Path, line: &str) -> bool {
    let tool = Arc::new(
        Tool::raw(
            ToolDef::new("Bash", "t"),
            json!({"type": "object"}),
            common::Nothing,
        )
        .unwrap(),
    );
    let target = PermissionTarget::Command(line.to_string());
    let context = Context::new(work).with_mode(PermissionMode::Default);
    let decision = RulePolicy::new().decide(&PermissionRequest {
        tool: &tool,
        input: &json!({}),
        target: &target,
        read_only: baton_engine::shell::is_read_only(line),
        context: &context,
        caller: None,
    });
    decision == PermissionDecision::Allow
}

/// Every path the commands of `line` named when bash ran it in `work`.
fn named_paths(work: &Path, line: &str) -> Vec<PathBuf> {
    // `timeout`: a line the policy wrongly approved could walk the whole
    // file system (`grep -r x link/..`).
    let output = Command::new("timeout")
        .arg("20")
        .arg("bash")
        .arg("-c")
        .arg("PS4=$'\\001 '; exec 9>&1 1>/dev/null 2>/dev/null; BASH_XTRACEFD=9; set -x; eval \"$1\"")
        .arg("bash")
        .arg(line)
        .current_dir(work)
        .stdin(Stdio::null())
        .output()
        .expect("bash must be installed");
    let trace = String::from_utf8_lossy(&output.stdout);
    let mut dir = work.to_path_buf();
    let mut paths = Vec::new();
    for row in trace.lines() {
        let Some(rest) = row.strip_prefix('\u{1}') else {
            continue;
        };
        let words: Vec<String> = rest
            .trim_start_matches(['\u{1}', ' '])
            .split(' ')
            .map(|w| w.trim_matches('\'').to_string())
            .collect();
        let Some((name, args)) = words.split_first() else {
            continue;
        };
        if name == "eval" {
            continue;
        }
        for arg in args {
            let value = match arg.strip_prefix('-') {
                Some(opt) => match opt.split_once('=') {
                    Some((_, v)) => v.to_string(),
                    None => continue,
                },
                None => arg.clone(),
            };
            if value.is_empty() || value == "x" {
                continue;
            }
            paths.push(dir.join(&value));
        }
        if name == "cd" {
            if let Some(target) = args.first() {
                dir = kernel_path(&dir.join(target));
            }
        }
    }
    paths
}

/// Where the kernel finds `path`: the longest prefix that exists, resolved
/// by the kernel itself (symlinks before `..`), then the rest as written.
fn kernel_path(path: &Path) -> PathBuf {
    let mut prefix = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(&prefix) {
            let mut out = real;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return baton_engine::paths::normalize(&out);
        }
        match (
            prefix.file_name().map(|n| n.to_os_string()),
            prefix.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                prefix = parent.to_path_buf();
            }
            _ => return baton_engine::paths::normalize(path),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(160))]

    #[test]
    fn approved_read_only_commands_name_nothing_outside(
        entries in prop::collection::vec(entry(), 0..8),
        lines in prop::collection::vec(line(), 1..6),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (work, _out) = build(&root, &entries);
        let inside = baton_engine::paths::resolve(&work);
        for line in &lines {
            if !auto_approved(&work, line) {
                continue;
            }
            for path in named_paths(&work, line) {
                let real = kernel_path(&path);
                prop_assert!(
                    real.starts_with(&inside),
                    "{line:?} was auto-approved but names {path:?} ({real:?}), outside {inside:?}; layout {entries:?}"
                );
            }
        }
    }
}

/// The property is not vacuous: some lines are approved, and bash does
/// name outside paths for some of the lines that are not.
#[test]
fn the_generator_reaches_both_sides() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (work, _) = build(&root, &[Entry::Link("link1", "{O}"), Entry::Dir("sub")]);
    assert!(auto_approved(&work, "ls sub"));
    assert!(!auto_approved(&work, "cat link1/f"));
    let named = named_paths(&work, "cat link1/f");
    assert!(named
        .iter()
        .any(|p| !baton_engine::paths::resolve(p).starts_with(&work)));
}
