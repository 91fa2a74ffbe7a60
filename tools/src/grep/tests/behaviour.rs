use std::fs;
use std::path::Path;

use baton_engine::call::Outcome;
use baton_engine::permission::FileAccess;
use baton_engine::{CancelReason, CancelScope, PermissionTarget, ToolUse};
use serde_json::json;

use crate::grep::options::{compile, GrepInput};
use crate::grep::search;
use crate::registry::BuiltinConfig;
use crate::test_support::Harness;

fn harness() -> Harness {
    Harness::new(vec![super::super::tool(&BuiltinConfig::default()).unwrap()])
}

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn small_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    write(
        r,
        "a.rs",
        "one\ntwo needle\nthree\nfour\nfive\nsix\nseven needle\neight\n",
    );
    write(r, "b.py", "Needle in python\nnothing\n");
    write(r, "notes/c.txt", "no match here\n");
    write(r, "skip.log", "needle in a log\n");
    write(r, ".gitignore", "*.log\n");
    dir
}

#[tokio::test]
async fn files_mode_is_the_default_and_honours_gitignore() {
    let h = harness();
    let dir = small_tree();
    let r = dir.path();
    let result = h.run("Grep", json!({"pattern": "needle"}), r).await;
    assert!(!result.is_error, "{}", result.text());
    assert_eq!(
        result.text(),
        format!("Found 1 file\n{}", r.join("a.rs").display())
    );

    let insensitive = h
        .run("Grep", json!({"pattern": "needle", "-i": true}), r)
        .await;
    assert!(
        insensitive.text().starts_with("Found 2 files"),
        "{}",
        insensitive.text()
    );
    assert!(!insensitive.text().contains("skip.log"));

    // A glob whitelists, even past .gitignore (as `rg --glob` does).
    let logs = h
        .run("Grep", json!({"pattern": "needle", "glob": "*.log"}), r)
        .await;
    assert!(logs.text().contains("skip.log"), "{}", logs.text());

    let py = h
        .run("Grep", json!({"pattern": "(?i)needle", "type": "py"}), r)
        .await;
    assert_eq!(
        py.text(),
        format!("Found 1 file\n{}", r.join("b.py").display())
    );
}

#[tokio::test]
async fn content_mode_uses_rg_layout_with_context() {
    let h = harness();
    let dir = small_tree();
    let r = dir.path();
    let a = r.join("a.rs").display().to_string();
    let result = h
        .run(
            "Grep",
            json!({"pattern": "needle", "output_mode": "content", "-B": 1, "type": "rust"}),
            r,
        )
        .await;
    assert_eq!(
        result.text(),
        format!("{a}-1-one\n{a}:2:two needle\n--\n{a}-6-six\n{a}:7:seven needle")
    );

    let c2 = h
        .run(
            "Grep",
            json!({"pattern": "needle", "output_mode": "content", "-C": 2, "-A": 0, "path": "a.rs"}),
            r,
        )
        .await;
    // A single file: no path prefix, as rg prints it.
    assert_eq!(
        c2.text(),
        "1-one\n2:two needle\n--\n5-five\n6-six\n7:seven needle"
    );

    let plain = h
        .run(
            "Grep",
            json!({"pattern": "^s", "output_mode": "content", "-n": false, "path": "a.rs"}),
            r,
        )
        .await;
    assert_eq!(plain.text(), "six\nseven needle");

    let multi = h
        .run(
            "Grep",
            json!({"pattern": "two.*?three", "output_mode": "content", "multiline": true, "path": "a.rs"}),
            r,
        )
        .await;
    assert_eq!(multi.text(), "2:two needle\n3:three");
}

#[tokio::test]
async fn count_mode_counts_matching_lines() {
    let h = harness();
    let dir = small_tree();
    let r = dir.path();
    let result = h
        .run(
            "Grep",
            json!({"pattern": "needle", "-i": true, "output_mode": "count"}),
            r,
        )
        .await;
    assert_eq!(
        result.text(),
        format!(
            "{}:2\n{}:1\n\nFound 3 matching lines in 2 files.",
            r.join("a.rs").display(),
            r.join("b.py").display()
        )
    );
    let none = h
        .run(
            "Grep",
            json!({"pattern": "zebra", "output_mode": "count"}),
            r,
        )
        .await;
    assert!(!none.is_error);
    assert_eq!(none.text(), "No matches found for `zebra`.");
}

#[tokio::test]
async fn head_limit_cuts_output_and_says_so() {
    let h = harness();
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    for i in 0..30 {
        write(r, &format!("f{i:02}.txt"), &"hit\n".repeat(10));
    }
    let files = h
        .run("Grep", json!({"pattern": "hit", "head_limit": 5}), r)
        .await;
    let text = files.text();
    assert!(text.starts_with("Found 5 files"), "{text}");
    assert!(
        text.contains("f04.txt") && !text.contains("f05.txt"),
        "{text}"
    );
    assert!(text.contains("cut after the first 5 files"), "{text}");

    let content = h
        .run(
            "Grep",
            json!({"pattern": "hit", "output_mode": "content", "head_limit": 7}),
            r,
        )
        .await;
    let text = content.text();
    assert_eq!(
        text.lines().filter(|l| l.ends_with(":hit")).count(),
        7,
        "{text}"
    );
    assert!(text.contains("cut after the first 7 lines"), "{text}");

    let default = h
        .run(
            "Grep",
            json!({"pattern": "hit", "output_mode": "content"}),
            r,
        )
        .await;
    let text = default.text();
    assert_eq!(text.lines().filter(|l| l.ends_with(":hit")).count(), 250);
    assert!(text.contains("cut after the first 250 lines"), "{text}");

    let unlimited = h
        .run(
            "Grep",
            json!({"pattern": "hit", "output_mode": "count", "head_limit": 0}),
            r,
        )
        .await;
    assert!(unlimited
        .text()
        .contains("Found 300 matching lines in 30 files."));
    assert!(!unlimited.text().contains("cut after"));
}

#[tokio::test]
async fn binary_files_are_skipped() {
    let h = harness();
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    fs::write(r.join("data.bin"), b"needle\0\x01\x02needle").unwrap();
    write(r, "text.txt", "needle\n");
    let all = h.run("Grep", json!({"pattern": "needle"}), r).await;
    assert_eq!(
        all.text(),
        format!("Found 1 file\n{}", r.join("text.txt").display())
    );
    let single = h
        .run("Grep", json!({"pattern": "needle", "path": "data.bin"}), r)
        .await;
    assert!(!single.is_error);
    assert!(single.text().contains("looks binary"), "{}", single.text());
}

#[tokio::test]
async fn bad_inputs_are_clear_errors() {
    let h = harness();
    let dir = small_tree();
    let r = dir.path();
    let cases = [
        (json!({"pattern": "foo("}), "not a valid regular expression"),
        (json!({"pattern": "a\\nb"}), "multiline: true"),
        (
            json!({"pattern": "x", "type": "klingon"}),
            "not a known file type",
        ),
        (
            json!({"pattern": "x", "glob": "src/[a-"}),
            "not a valid glob",
        ),
        (
            json!({"pattern": "x", "path": "missing/dir"}),
            "does not exist",
        ),
        (json!({"pattern": ""}), "pattern is empty"),
    ];
    for (input, expected) in cases {
        let result = h.run("Grep", input.clone(), r).await;
        assert!(result.is_error, "{input}");
        assert_eq!(result.outcome, Outcome::ValidationFailed, "{input}");
        assert!(
            result.text().contains(expected),
            "{input}: {}",
            result.text()
        );
    }
    let wrong_mode = h
        .run("Grep", json!({"pattern": "x", "output_mode": "lines"}), r)
        .await;
    assert_eq!(wrong_mode.outcome, Outcome::InvalidInput);
    let wrong_type = h.run("Grep", json!({"pattern": "x", "-A": "two"}), r).await;
    assert_eq!(wrong_type.outcome, Outcome::InvalidInput);
}

#[tokio::test]
async fn is_safe_and_targets_the_search_path() {
    let h = harness();
    let dir = small_tree();
    let r = dir.path();
    let prepared = h
        .pipeline
        .prepare(ToolUse::new("c", "Grep", json!({"pattern": "x"})));
    assert!(prepared.safe && prepared.read_only);
    let tool = super::super::tool(&BuiltinConfig::default()).unwrap();
    let input = tool
        .parse(&json!({"pattern": "x", "path": "notes/../notes"}))
        .unwrap();
    assert_eq!(
        tool.permission_target(&input, &h.context(r)),
        PermissionTarget::Path {
            path: r.canonicalize().unwrap().join("notes"),
            access: FileAccess::Read,
        }
    );
}

#[test]
fn a_cancelled_search_stops() {
    let dir = small_tree();
    let input: GrepInput = serde_json::from_value(json!({"pattern": "needle"})).unwrap();
    let compiled = compile(&input, dir.path()).unwrap();
    let cancel = CancelScope::new();
    cancel.cancel(CancelReason::User);
    let root = crate::files::open::Dir::open(&dir.path().canonicalize().unwrap()).unwrap();
    let root = search::Root::Dir(root);
    let found = search::run(&input, &compiled, &root, 10, &cancel, &|_| false);
    assert!(found.files.is_empty());
}

#[tokio::test]
async fn no_limit_still_stops_at_the_hard_cap() {
    let h = harness();
    let dir = tempfile::tempdir().unwrap();
    let lines = crate::grep::output::MAX_ENTRIES + 5;
    fs::write(dir.path().join("many.txt"), "hit\n".repeat(lines)).unwrap();
    let tool = super::super::tool(&BuiltinConfig::default()).unwrap();
    let input = tool
        .parse(&json!({"pattern": "hit", "output_mode": "content", "head_limit": 0}))
        .unwrap();
    let out = tool.call(input, h.context(dir.path())).await.unwrap();
    let text = baton_engine::content::joined_text(&out.content);
    let hits = text.lines().filter(|l| l.ends_with(":hit")).count();
    assert_eq!(hits, crate::grep::output::MAX_ENTRIES);
    assert!(
        text.contains("the most Grep returns in one call"),
        "{}",
        &text[text.len() - 300..]
    );
}
