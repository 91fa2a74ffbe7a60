//! The tool through the real pipeline, on real files.

use serde_json::json;

use crate::test_support::Harness;

fn harness() -> Harness {
    Harness::new(vec![super::tool().unwrap()])
}

#[tokio::test]
async fn updates_adds_and_deletes_in_one_patch() {
    let h = harness();
    let dir = h.dir.path();
    std::fs::write(dir.join("a.rs"), "fn main() {\n    old();\n}\n").unwrap();
    std::fs::write(dir.join("gone.txt"), "bye\n").unwrap();
    let patch =
        "*** Begin Patch\n*** Update File: a.rs\n@@ fn main() {\n-    old();\n+    new();\n\
                 *** Add File: sub/new.txt\n+hello\n*** Delete File: gone.txt\n*** End Patch\n";
    let r = h.run("apply_patch", json!({"input": patch}), dir).await;
    assert!(!r.is_error, "{}", r.text());
    assert_eq!(
        std::fs::read_to_string(dir.join("a.rs")).unwrap(),
        "fn main() {\n    new();\n}\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("sub/new.txt")).unwrap(),
        "hello\n"
    );
    assert!(!dir.join("gone.txt").exists());
}

#[tokio::test]
async fn a_bad_hunk_changes_nothing() {
    let h = harness();
    let dir = h.dir.path();
    std::fs::write(dir.join("a.txt"), "one\n").unwrap();
    std::fs::write(dir.join("b.txt"), "two\n").unwrap();
    let patch = "*** Begin Patch\n*** Update File: a.txt\n-one\n+ONE\n\
                 *** Update File: b.txt\n-three\n+THREE\n*** End Patch";
    let r = h.run("apply_patch", json!({"input": patch}), dir).await;
    assert!(r.is_error);
    assert!(
        r.text().contains("b.txt") && r.text().contains("three"),
        "{}",
        r.text()
    );
    assert_eq!(std::fs::read_to_string(dir.join("a.txt")).unwrap(), "one\n");
    assert_eq!(std::fs::read_to_string(dir.join("b.txt")).unwrap(), "two\n");
}

#[tokio::test]
async fn a_malformed_patch_is_refused_with_its_line() {
    let h = harness();
    let r = h
        .run(
            "apply_patch",
            json!({"input": "*** Begin Patch\n*** Add File: x\nno plus\n*** End Patch"}),
            h.dir.path(),
        )
        .await;
    assert!(r.is_error);
    assert!(r.text().contains("line 3"), "{}", r.text());
    assert!(!h.dir.path().join("x").exists());
}

#[tokio::test]
async fn a_move_writes_the_new_path_and_removes_the_old() {
    let h = harness();
    let dir = h.dir.path();
    std::fs::write(dir.join("from.txt"), "a\nb\n").unwrap();
    let patch = "*** Begin Patch\n*** Update File: from.txt\n*** Move to: to.txt\n@@\n a\n-b\n+c\n*** End Patch";
    let r = h.run("apply_patch", json!({"input": patch}), dir).await;
    assert!(!r.is_error, "{}", r.text());
    assert!(!dir.join("from.txt").exists());
    assert_eq!(
        std::fs::read_to_string(dir.join("to.txt")).unwrap(),
        "a\nc\n"
    );
}

#[tokio::test]
async fn adding_an_existing_file_is_refused() {
    let h = harness();
    let dir = h.dir.path();
    std::fs::write(dir.join("x"), "keep\n").unwrap();
    let r = h
        .run(
            "apply_patch",
            json!({"input": "*** Begin Patch\n*** Add File: x\n+new\n*** End Patch"}),
            dir,
        )
        .await;
    assert!(
        r.is_error && r.text().contains("already exists"),
        "{}",
        r.text()
    );
    assert_eq!(std::fs::read_to_string(dir.join("x")).unwrap(), "keep\n");
}

/// A deny rule on the second file of a patch stops the whole patch, and an
/// allow rule for the first does not let it through.
#[tokio::test]
async fn every_path_of_a_patch_is_judged_by_the_rules() {
    use baton_engine::{Pipeline, RulePolicy, ToolPool};
    use std::sync::Arc;
    let mut h = harness();
    let dir = h.dir.path().to_path_buf();
    std::fs::write(dir.join("ok.txt"), "a\n").unwrap();
    std::fs::write(dir.join("secret.txt"), "s\n").unwrap();
    let policy = RulePolicy::parse(
        &["Edit(./ok.txt)"],
        &[],
        &["Edit(./secret.txt)"],
        None,
        &dir,
    )
    .unwrap();
    h.pipeline =
        Pipeline::new(ToolPool::of(vec![super::tool().unwrap()])).with_policy(Arc::new(policy));
    let patch = "*** Begin Patch\n*** Update File: ok.txt\n-a\n+b\n\
                 *** Update File: secret.txt\n-s\n+leaked\n*** End Patch";
    let r = h.run("apply_patch", json!({"input": patch}), &dir).await;
    assert!(r.is_error, "{}", r.text());
    assert!(
        r.text().contains("`Edit(./secret.txt)` matches"),
        "{}",
        r.text()
    );
    assert_eq!(std::fs::read_to_string(dir.join("ok.txt")).unwrap(), "a\n");
    assert_eq!(
        std::fs::read_to_string(dir.join("secret.txt")).unwrap(),
        "s\n"
    );
    // The first file alone is allowed by its rule.
    let one = "*** Begin Patch\n*** Update File: ok.txt\n-a\n+b\n*** End Patch";
    let r = h.run("apply_patch", json!({"input": one}), &dir).await;
    assert!(!r.is_error, "{}", r.text());
}
