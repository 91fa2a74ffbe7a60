use std::os::unix::fs::PermissionsExt;

use baton_engine::{Outcome, ToolUse};
use serde_json::json;

use super::{
    age, assert_err, assert_ok, content, make_unreadable, rerun_without_dac_override, Env,
};

#[tokio::test]
async fn creates_files_and_parent_directories() {
    let env = Env::new();
    let r = env
        .call(
            "Write",
            json!({ "file_path": env.p("a/b/c.txt"), "content": "one\ntwo\n" }),
        )
        .await;
    assert_ok(&r);
    assert!(r.text().contains("Created") && r.text().contains("2 lines"));
    assert_eq!(content(&env.path("a/b/c.txt")), b"one\ntwo\n");
    // No temporary file is left behind.
    let names: Vec<_> = std::fs::read_dir(env.path("a/b"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
}

#[tokio::test]
async fn is_neither_safe_nor_read_only() {
    let env = Env::new();
    let p = env.pipeline.prepare(ToolUse::new(
        "1",
        "Write",
        json!({ "file_path": "/x", "content": "" }),
    ));
    assert!(!p.safe && !p.read_only);
}

#[tokio::test]
async fn overwriting_requires_a_read_first() {
    let env = Env::new();
    let path = env.write("keep.txt", "precious\n");
    let r = env
        .call(
            "Write",
            json!({ "file_path": env.p("keep.txt"), "content": "gone" }),
        )
        .await;
    assert_err(
        &r,
        Outcome::ToolError,
        &["has not been read", "Read it first"],
    );
    assert_eq!(content(&path), b"precious\n");

    env.read("keep.txt").await;
    let r = env
        .call(
            "Write",
            json!({ "file_path": env.p("keep.txt"), "content": "replaced\n" }),
        )
        .await;
    assert_ok(&r);
    assert!(r.text().contains("Overwrote"));
    assert_eq!(content(&path), b"replaced\n");
    // The write itself counts as knowing the content: a second write works.
    let r = env
        .call(
            "Write",
            json!({ "file_path": env.p("keep.txt"), "content": "again\n" }),
        )
        .await;
    assert_ok(&r);
    assert_eq!(content(&path), b"again\n");
}

#[tokio::test]
async fn a_file_changed_since_read_is_not_overwritten() {
    let env = Env::new();
    let path = env.write("shared.txt", "v1\n");
    age(&path);
    env.read("shared.txt").await;
    std::fs::write(&path, "v2 by the user\n").unwrap();
    let r = env
        .call(
            "Write",
            json!({ "file_path": env.p("shared.txt"), "content": "model's v3\n" }),
        )
        .await;
    assert_err(
        &r,
        Outcome::ToolError,
        &["changed since you last read it", "Read it again"],
    );
    assert_eq!(content(&path), b"v2 by the user\n");
}

#[tokio::test]
async fn a_touch_without_change_does_not_force_a_reread() {
    let env = Env::new();
    let path = env.write("t.txt", "same\n");
    env.read("t.txt").await;
    age(&path);
    let r = env
        .call(
            "Write",
            json!({ "file_path": env.p("t.txt"), "content": "new\n" }),
        )
        .await;
    assert_ok(&r);
}

#[tokio::test]
async fn keeps_the_file_mode() {
    let env = Env::new();
    let path = env.write("run.sh", "#!/bin/sh\n");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o751)).unwrap();
    env.read("run.sh").await;
    let r = env
        .call(
            "Write",
            json!({ "file_path": env.p("run.sh"), "content": "#!/bin/sh\necho hi\n" }),
        )
        .await;
    assert_ok(&r);
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777,
        0o751
    );
}

#[tokio::test]
async fn a_directory_is_not_a_file() {
    let env = Env::new();
    std::fs::create_dir(env.path("d")).unwrap();
    let r = env
        .call("Write", json!({ "file_path": env.p("d"), "content": "x" }))
        .await;
    assert_err(&r, Outcome::ToolError, &["is a directory"]);
    assert!(env.path("d").is_dir());
}

#[tokio::test]
async fn an_unwritable_directory_fails_cleanly() {
    let env = Env::new();
    std::fs::create_dir(env.path("ro")).unwrap();
    let probe = env.write("ro/probe", "x");
    std::fs::remove_file(&probe).unwrap();
    std::fs::set_permissions(env.path("ro"), std::fs::Permissions::from_mode(0o555)).unwrap();
    if std::fs::write(&probe, "x").is_ok() {
        return rerun_without_dac_override(
            "files::tests::write_tests::an_unwritable_directory_fails_cleanly",
        );
    }
    let r = env
        .call(
            "Write",
            json!({ "file_path": env.p("ro/new/deep.txt"), "content": "x" }),
        )
        .await;
    assert_err(&r, Outcome::ToolError, &["Permission denied"]);
    assert_eq!(std::fs::read_dir(env.path("ro")).unwrap().count(), 0);
}

#[tokio::test]
async fn an_unreadable_existing_file_is_not_replaced() {
    let env = Env::new();
    let path = env.write("locked.txt", "data\n");
    env.read("locked.txt").await;
    if !make_unreadable(&path) {
        return rerun_without_dac_override(
            "files::tests::write_tests::an_unreadable_existing_file_is_not_replaced",
        );
    }
    let r = env
        .call(
            "Write",
            json!({ "file_path": env.p("locked.txt"), "content": "new" }),
        )
        .await;
    assert_err(&r, Outcome::ToolError, &["Permission denied"]);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert_eq!(content(&path), b"data\n");
}

#[tokio::test]
async fn bad_inputs_fail_validation() {
    let env = Env::new();
    let r = env
        .call("Write", json!({ "file_path": "x.txt", "content": "a" }))
        .await;
    assert_err(&r, Outcome::ValidationFailed, &["absolute"]);
    assert!(!env.path("x.txt").exists());
    let r = env
        .call("Write", json!({ "file_path": env.p("x.txt") }))
        .await;
    assert_err(&r, Outcome::InvalidInput, &["content"]);
}

#[tokio::test]
async fn a_full_disk_changes_nothing() {
    const NAME: &str = "files::tests::write_tests::a_full_disk_changes_nothing";
    if std::env::var_os(super::FSIZE_MARK).is_none() {
        return super::rerun_with_file_size_limit(NAME, 64 * 1024);
    }
    let env = Env::new();
    let path = env.write("keep.txt", "old\n");
    env.read("keep.txt").await;
    let big = "x".repeat(200_000);

    let r = env
        .call(
            "Write",
            json!({ "file_path": env.p("keep.txt"), "content": big }),
        )
        .await;
    assert_err(
        &r,
        Outcome::ToolError,
        &["Could not write", "keep.txt", "File too large"],
    );
    assert_eq!(content(&path), b"old\n");

    let r = env
        .call(
            "Edit",
            json!({ "file_path": env.p("keep.txt"), "old_string": "old", "new_string": big }),
        )
        .await;
    assert_err(&r, Outcome::ToolError, &["Could not write"]);
    assert_eq!(content(&path), b"old\n");

    let r = env
        .call(
            "Write",
            json!({ "file_path": env.p("fresh/deeper/f.txt"), "content": big }),
        )
        .await;
    assert_err(&r, Outcome::ToolError, &["Could not write"]);
    assert!(
        !env.path("fresh").exists(),
        "directories made for the failed write remain"
    );

    // No temporary file is left next to the target.
    let names: Vec<_> = std::fs::read_dir(&env.root)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("keep.txt")]);
    // And the session still allows an ordinary edit.
    let r = env
        .call(
            "Edit",
            json!({ "file_path": env.p("keep.txt"), "old_string": "old", "new_string": "new" }),
        )
        .await;
    assert_ok(&r);
}

#[tokio::test]
async fn reports_what_it_wrote_to_hooks_and_the_host() {
    let env = Env::new();
    let input = json!({ "file_path": env.p("n.txt"), "content": "one\n" });
    let r = env.call("Write", input.clone()).await;
    assert_ok(&r);
    assert_eq!(r.details.files_written, vec![env.path("n.txt")]);
    let response = r.response.as_ref().expect("Write gives its tool_response");
    assert_eq!(response["type"], "create");
    assert_eq!(response["filePath"], env.p("n.txt"));
    assert_eq!(response["content"], "one\n");
    // The same content again: nothing is written, and nothing reported.
    let again = env.call("Write", input).await;
    assert_ok(&again);
    assert!(again.details.files_written.is_empty());
    assert_eq!(again.response.as_ref().unwrap()["type"], "update");
}
