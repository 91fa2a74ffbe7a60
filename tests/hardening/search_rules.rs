//! Hole 5: read rules hold for every file Grep and Glob visit, not only for
//! the search root; dot-files reached through `glob`, nested directories
//! and links included.

use serde_json::json;

use super::*;

const DENY: &str = r#"{"permissions": {"deny": ["Read(./secret/**)", "Read(.env)", "Grep(**/*.pem)", "Glob(**/*.pem)"]}}"#;

fn tree() -> Ws {
    let ws = Ws::new();
    ws.write("secret/key.txt", "SECRET one\n");
    ws.write("secret/deeper/more.txt", "SECRET deeper\n");
    ws.write(".env", "SECRET=two\n");
    ws.write("sub/.env", "SECRET three\n");
    ws.write("certs/server.pem", "SECRET pem\n");
    ws.write("src/a.rs", "// SECRET is fine here\n");
    std::os::unix::fs::symlink(ws.root.join("secret/key.txt"), ws.root.join("link.txt")).unwrap();
    ws
}

fn leaks(text: &str) -> Vec<&'static str> {
    [
        "SECRET one",
        "SECRET deeper",
        "SECRET=two",
        "SECRET three",
        "SECRET pem",
        "key.txt",
        "more.txt",
        ".env",
        "server.pem",
        "link.txt",
    ]
    .into_iter()
    .filter(|needle| text.contains(needle))
    .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grep_never_shows_a_denied_file_in_any_mode_or_output_mode() {
    let ws = tree();
    for mode in MODES {
        let calls = vec![
            (
                "content",
                "Grep",
                json!({"pattern": "SECRET", "output_mode": "content"}),
            ),
            ("files", "Grep", json!({"pattern": "SECRET"})),
            (
                "count",
                "Grep",
                json!({"pattern": "SECRET", "output_mode": "count"}),
            ),
            // Dot-files are skipped by default; a glob brings them back.
            (
                "dotglob",
                "Grep",
                json!({"pattern": "SECRET", "glob": ".env", "output_mode": "content"}),
            ),
            (
                "dotglob2",
                "Grep",
                json!({"pattern": "SECRET", "glob": "**/.env*", "output_mode": "content"}),
            ),
            (
                "pemglob",
                "Grep",
                json!({"pattern": "SECRET", "glob": "*.pem", "output_mode": "content"}),
            ),
            (
                "ctx",
                "Grep",
                json!({"pattern": "SECRET", "output_mode": "content", "-C": 2, "path": ws.p("")}),
            ),
            (
                "sub",
                "Grep",
                json!({"pattern": "SECRET", "path": ws.p("sub"), "output_mode": "content"}),
            ),
            (
                "certs",
                "Grep",
                json!({"pattern": "SECRET", "path": ws.p("certs"), "output_mode": "content"}),
            ),
        ];
        let run = run(&ws, DENY, mode, Asker::Nobody, calls).await;
        for id in [
            "content", "files", "count", "dotglob", "dotglob2", "pemglob", "ctx", "sub", "certs",
        ] {
            let text = run.text(id);
            assert!(
                leaks(&text).is_empty(),
                "{mode} {id}: {:?} in {text}",
                leaks(&text)
            );
            assert!(!run.get(id).is_error, "{mode} {id}: {text}");
        }
        assert!(
            run.text("content").contains("a.rs"),
            "{}",
            run.text("content")
        );
        assert!(
            run.text("content").contains("permission rules"),
            "{}",
            run.text("content")
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denied_file_named_as_the_search_root_is_denied_outright() {
    let ws = tree();
    for mode in MODES {
        let calls = vec![
            (
                "file",
                "Grep",
                json!({"pattern": "SECRET", "path": ws.p("secret/key.txt")}),
            ),
            (
                "dir",
                "Grep",
                json!({"pattern": "SECRET", "path": ws.p("secret")}),
            ),
            (
                "env",
                "Grep",
                json!({"pattern": "SECRET", "path": ws.p("sub/.env")}),
            ),
        ];
        let run = run(&ws, DENY, mode, Asker::Nobody, calls).await;
        for id in ["file", "dir", "env"] {
            assert!(denied(run.get(id)), "{mode} {id}: {}", run.text(id));
            assert!(leaks(&run.text(id))
                .iter()
                .all(|l| *l == "key.txt" || *l == ".env"));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn glob_never_names_a_denied_file() {
    let ws = tree();
    for mode in MODES {
        let calls = vec![
            ("all", "Glob", json!({"pattern": "**/*"})),
            ("dot", "Glob", json!({"pattern": "**/.env"})),
            ("top", "Glob", json!({"pattern": ".env"})),
            ("secret", "Glob", json!({"pattern": "secret/**"})),
            ("pem", "Glob", json!({"pattern": "**/*.pem"})),
            ("link", "Glob", json!({"pattern": "*.txt"})),
        ];
        let run = run(&ws, DENY, mode, Asker::Nobody, calls).await;
        for id in ["all", "dot", "top", "secret", "pem", "link"] {
            // The pattern itself is echoed when nothing is found.
            let text: String = run
                .text(id)
                .lines()
                .filter(|l| !l.starts_with("No files found matching"))
                .collect();
            assert!(
                leaks(&text).is_empty(),
                "{mode} {id}: {:?} in {text}",
                leaks(&text)
            );
        }
        assert!(run.text("all").contains("a.rs"));
        assert!(run.text("dot").contains("not shown"), "{}", run.text("dot"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_rules_hide_files_too_and_unrelated_rules_hide_nothing() {
    let ws = tree();
    let ask =
        r#"{"permissions": {"ask": ["Read(.env)"], "deny": ["Edit(./secret/**)", "Bash(cat:*)"]}}"#;
    let calls = vec![(
        "all",
        "Grep",
        json!({"pattern": "SECRET", "output_mode": "content", "glob": "**/*"}),
    )];
    let run = run(&ws, ask, PermissionMode::Default, Asker::Nobody, calls).await;
    let text = run.text("all");
    assert!(
        !text.contains("SECRET=two") && !text.contains("SECRET three"),
        "{text}"
    );
    // An Edit rule says nothing about reading.
    assert!(text.contains("SECRET one"), "{text}");
}
