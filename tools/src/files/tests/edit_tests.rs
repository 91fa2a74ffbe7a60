use std::os::unix::fs::PermissionsExt;

use baton_engine::Outcome;
use serde_json::{json, Value};

use super::{
    age, assert_err, assert_ok, content, make_unreadable, rerun_without_dac_override, Env,
};

fn edit(env: &Env, rel: &str, old: &str, new: &str) -> Value {
    json!({ "file_path": env.p(rel), "old_string": old, "new_string": new })
}

#[tokio::test]
async fn replaces_a_unique_string_and_shows_a_diff() {
    let env = Env::new();
    let path = env.write("m.rs", "fn a() {}\nfn b() {}\nfn c() {}\n");
    env.read("m.rs").await;
    let r = env
        .call(
            "Edit",
            edit(&env, "m.rs", "fn b() {}", "fn b() { todo!() }"),
        )
        .await;
    assert_ok(&r);
    assert_eq!(
        content(&path),
        b"fn a() {}\nfn b() { todo!() }\nfn c() {}\n"
    );
    let t = r.text();
    assert!(
        t.contains("1 replacement")
            && t.contains("-fn b() {}")
            && t.contains("+fn b() { todo!() }"),
        "{t}"
    );
    assert!(t.contains("@@"), "{t}");
}

#[tokio::test]
async fn a_non_unique_string_is_refused_with_its_count() {
    let env = Env::new();
    let path = env.write("dup.txt", "x = 1\nx = 1\nx = 1\n");
    env.read("dup.txt").await;
    let r = env
        .call("Edit", edit(&env, "dup.txt", "x = 1", "x = 2"))
        .await;
    assert_err(&r, Outcome::ToolError, &["occurs 3 times", "replace_all"]);
    assert_eq!(content(&path), b"x = 1\nx = 1\nx = 1\n");

    let mut all = edit(&env, "dup.txt", "x = 1", "x = 2");
    all["replace_all"] = json!(true);
    let r = env.call("Edit", all).await;
    assert_ok(&r);
    assert!(r.text().contains("3 replacements"));
    assert_eq!(content(&path), b"x = 2\nx = 2\nx = 2\n");
}

#[tokio::test]
async fn a_missing_string_is_refused() {
    let env = Env::new();
    let path = env.write("f.txt", "    indented\n");
    env.read("f.txt").await;
    let r = env
        .call("Edit", edit(&env, "f.txt", "indented\n  ", "x"))
        .await;
    assert_err(
        &r,
        Outcome::ToolError,
        &["was not found", "exactly", "is at line 1"],
    );
    assert_eq!(content(&path), b"    indented\n");
}

#[tokio::test]
async fn requires_a_read_and_an_unchanged_file() {
    let env = Env::new();
    let path = env.write("f.txt", "hello\n");
    let r = env.call("Edit", edit(&env, "f.txt", "hello", "bye")).await;
    assert_err(&r, Outcome::ToolError, &["has not been read"]);
    assert_eq!(content(&path), b"hello\n");

    age(&path);
    env.read("f.txt").await;
    std::fs::write(&path, "hello world\n").unwrap();
    let r = env.call("Edit", edit(&env, "f.txt", "hello", "bye")).await;
    assert_err(&r, Outcome::ToolError, &["changed since you last read it"]);
    assert_eq!(content(&path), b"hello world\n");
}

#[tokio::test]
async fn consecutive_edits_need_no_reread() {
    let env = Env::new();
    let path = env.write("c.txt", "a\nb\nc\n");
    env.read("c.txt").await;
    for (old, new) in [("a\n", "A\n"), ("b\n", "B\n"), ("c\n", "C\n")] {
        assert_ok(&env.call("Edit", edit(&env, "c.txt", old, new)).await);
    }
    assert_eq!(content(&path), b"A\nB\nC\n");
}

#[tokio::test]
async fn keeps_crlf_line_endings() {
    let env = Env::new();
    let path = env.write("win.txt", "one\r\ntwo\r\nthree\r\n");
    env.read("win.txt").await;
    let r = env
        .call("Edit", edit(&env, "win.txt", "one\ntwo", "uno\ndos\nplus"))
        .await;
    assert_ok(&r);
    assert_eq!(content(&path), b"uno\r\ndos\r\nplus\r\nthree\r\n");
}

#[tokio::test]
async fn refuses_non_utf8_files() {
    let env = Env::new();
    let path = env.write("l1.txt", b"caf\xe9 noir\n");
    env.read("l1.txt").await;
    let r = env
        .call("Edit", edit(&env, "l1.txt", "noir", "au lait"))
        .await;
    assert_err(&r, Outcome::ToolError, &["not valid UTF-8", "offset 3"]);
    assert_eq!(content(&path), b"caf\xe9 noir\n");
}

#[tokio::test]
async fn empty_old_string_creates_a_new_file_only() {
    let env = Env::new();
    let r = env
        .call("Edit", edit(&env, "new/file.txt", "", "fresh\n"))
        .await;
    assert_ok(&r);
    assert_eq!(content(&env.path("new/file.txt")), b"fresh\n");
    // Now known to the session, but not empty: an empty old_string is refused.
    let r = env
        .call("Edit", edit(&env, "new/file.txt", "", "other\n"))
        .await;
    assert_err(&r, Outcome::ToolError, &["already has content"]);
    assert_eq!(content(&env.path("new/file.txt")), b"fresh\n");
    // And the file can be edited right away.
    assert_ok(
        &env.call("Edit", edit(&env, "new/file.txt", "fresh", "ripe"))
            .await,
    );
}

#[tokio::test]
async fn a_missing_file_suggests_close_names() {
    let env = Env::new();
    env.write("main.rs", "x");
    let r = env.call("Edit", edit(&env, "mian.rs", "x", "y")).await;
    assert_err(
        &r,
        Outcome::ToolError,
        &["does not exist", "main.rs", "Write"],
    );
    assert!(!env.path("mian.rs").exists());
}

#[tokio::test]
async fn keeps_permissions_and_handles_a_large_file() {
    let env = Env::new();
    let mut text: String = (0..200_000).map(|i| format!("line {i}\n")).collect();
    let path = env.write("big.txt", &text);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let r = env
        .call(
            "Read",
            json!({ "file_path": env.p("big.txt"), "offset": 150_000, "limit": 1 }),
        )
        .await;
    assert_ok(&r);
    let r = env
        .call("Edit", edit(&env, "big.txt", "line 150000\n", "changed\n"))
        .await;
    assert_ok(&r);
    text = text.replace("line 150000\n", "changed\n");
    assert_eq!(content(&path), text.as_bytes());
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
}

#[tokio::test]
async fn an_unreadable_file_is_left_alone() {
    let env = Env::new();
    let path = env.write("p.txt", "abc\n");
    env.read("p.txt").await;
    if !make_unreadable(&path) {
        return rerun_without_dac_override(
            "files::tests::edit_tests::an_unreadable_file_is_left_alone",
        );
    }
    let r = env.call("Edit", edit(&env, "p.txt", "abc", "xyz")).await;
    assert_err(&r, Outcome::ToolError, &["Permission denied"]);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert_eq!(content(&path), b"abc\n");
}

#[tokio::test]
async fn bad_inputs_fail_validation() {
    let env = Env::new();
    let path = env.write("v.txt", "same\n");
    env.read("v.txt").await;
    let r = env.call("Edit", edit(&env, "v.txt", "same", "same")).await;
    assert_err(&r, Outcome::ValidationFailed, &["identical"]);
    let r = env
        .call(
            "Edit",
            json!({ "file_path": "v.txt", "old_string": "a", "new_string": "b" }),
        )
        .await;
    assert_err(&r, Outcome::ValidationFailed, &["absolute"]);
    let r = env.call("Edit", edit(&env, "n.ipynb", "a", "b")).await;
    assert_err(&r, Outcome::ValidationFailed, &["NotebookEdit"]);
    let r = env
        .call(
            "Edit",
            json!({ "file_path": env.p("v.txt"), "old_string": "same" }),
        )
        .await;
    assert_err(&r, Outcome::InvalidInput, &["new_string"]);
    assert_eq!(content(&path), b"same\n");
}
