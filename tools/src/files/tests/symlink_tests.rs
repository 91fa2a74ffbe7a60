use std::os::unix::fs::symlink;
use std::sync::{Arc, Mutex};

use baton_engine::permission::{FileAccess, PermissionRequest};
use baton_engine::{Outcome, PermissionDecision, PermissionPolicy, PermissionTarget};
use serde_json::json;

use super::{assert_err, assert_ok, content, Env};

/// Denies any path outside the workspace roots and remembers what it saw.
#[derive(Default)]
struct InsideOnly {
    seen: Mutex<Vec<PermissionTarget>>,
}

impl PermissionPolicy for InsideOnly {
    fn decide(&self, request: &PermissionRequest<'_>) -> PermissionDecision {
        self.seen.lock().unwrap().push(request.target.clone());
        match request.target {
            PermissionTarget::Path { path, .. } if !request.context.is_inside_roots(path) => {
                PermissionDecision::Deny {
                    reason: format!("{} is outside the workspace", path.display()),
                }
            }
            _ => PermissionDecision::Allow,
        }
    }
}

#[tokio::test]
async fn a_link_to_outside_is_judged_at_its_target() {
    let outside = tempfile::tempdir().unwrap();
    let outside_root = outside.path().canonicalize().unwrap();
    std::fs::write(outside_root.join("secret.txt"), "outside\n").unwrap();
    std::fs::write(outside_root.join("n.ipynb"), super::notebook_tests::SAMPLE).unwrap();

    let env = Env::new();
    symlink(&outside_root, env.path("escape")).unwrap();
    let ctx = env.ctx();
    let cases = [
        (
            "Read",
            json!({ "file_path": env.p("escape/secret.txt") }),
            "secret.txt",
            FileAccess::Read,
        ),
        (
            "Write",
            json!({ "file_path": env.p("escape/new.txt"), "content": "x" }),
            "new.txt",
            FileAccess::Write,
        ),
        (
            "Edit",
            json!({ "file_path": env.p("escape/../escape/secret.txt"), "old_string": "a", "new_string": "b" }),
            "secret.txt",
            FileAccess::Write,
        ),
        (
            "NotebookEdit",
            json!({ "notebook_path": env.p("escape/n.ipynb"), "cell_id": "0", "new_source": "" }),
            "n.ipynb",
            FileAccess::Write,
        ),
    ];
    for (name, input, file, access) in cases {
        let tool = env.pipeline.pool().get(name).unwrap().clone();
        let parsed = tool.parse(&input).unwrap();
        let target = tool.permission_target(&parsed, &ctx);
        assert_eq!(
            target,
            PermissionTarget::Path {
                path: outside_root.join(file),
                access
            },
            "{name}"
        );
        assert!(!ctx.context.is_inside_roots(outside_root.join(file)));
    }
}

#[tokio::test]
async fn the_permission_stage_stops_writes_through_an_outward_link() {
    let outside = tempfile::tempdir().unwrap();
    let outside_root = outside.path().canonicalize().unwrap();
    std::fs::write(outside_root.join("victim.txt"), "keep me\n").unwrap();
    let policy = Arc::new(InsideOnly::default());
    let env = Env::with_pipeline(|p| p.with_policy(policy.clone()));
    symlink(outside_root.join("victim.txt"), env.path("innocent.txt")).unwrap();

    let r = env
        .call("Read", json!({ "file_path": env.p("innocent.txt") }))
        .await;
    assert_err(&r, Outcome::Denied, &["outside the workspace"]);
    let r = env
        .call(
            "Write",
            json!({ "file_path": env.p("innocent.txt"), "content": "pwned" }),
        )
        .await;
    assert_err(&r, Outcome::Denied, &["outside the workspace"]);
    assert_eq!(content(&outside_root.join("victim.txt")), b"keep me\n");
    let seen = policy.seen.lock().unwrap();
    assert!(seen.iter().all(
        |t| matches!(t, PermissionTarget::Path { path, .. } if *path == outside_root.join("victim.txt"))
    ));
}

#[tokio::test]
async fn writes_go_through_an_inner_link_and_keep_it() {
    let env = Env::new();
    let real = env.write("real.txt", "v1\n");
    symlink(&real, env.path("alias.txt")).unwrap();
    // Reading through the link counts for the real file, and vice versa.
    env.read("alias.txt").await;
    let r = env
        .call(
            "Edit",
            json!({ "file_path": env.p("real.txt"), "old_string": "v1", "new_string": "v2" }),
        )
        .await;
    assert_ok(&r);
    let r = env
        .call(
            "Write",
            json!({ "file_path": env.p("alias.txt"), "content": "v3\n" }),
        )
        .await;
    assert_ok(&r);
    assert!(r.text().contains("resolved to"), "{}", r.text());
    assert!(std::fs::symlink_metadata(env.path("alias.txt"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(content(&real), b"v3\n");
}

#[tokio::test]
async fn a_dangling_link_is_judged_and_written_at_its_target() {
    let outside = tempfile::tempdir().unwrap();
    let target = outside
        .path()
        .canonicalize()
        .unwrap()
        .join("sub/created.txt");
    let env = Env::new();
    symlink(&target, env.path("dangling")).unwrap();
    let input = json!({ "file_path": env.p("dangling"), "content": "through the link\n" });

    let tool = env.pipeline.pool().get("Write").unwrap().clone();
    let parsed = tool.parse(&input).unwrap();
    let judged = tool.permission_target(&parsed, &env.ctx());
    assert_eq!(
        judged,
        PermissionTarget::Path {
            path: target.clone(),
            access: FileAccess::Write
        }
    );

    let r = env.call("Write", input).await;
    assert_ok(&r);
    assert_eq!(content(&target), b"through the link\n");
    assert!(std::fs::symlink_metadata(env.path("dangling"))
        .unwrap()
        .file_type()
        .is_symlink());
}

#[tokio::test]
async fn a_link_loop_is_an_error_not_a_hang() {
    let env = Env::new();
    symlink(env.path("b"), env.path("a")).unwrap();
    symlink(env.path("a"), env.path("b")).unwrap();
    let r = env.call("Read", json!({ "file_path": env.p("a") })).await;
    assert!(r.is_error, "{}", r.text());
    assert!(r.text().contains("symbolic links"), "{}", r.text());
    let r = env
        .call("Write", json!({ "file_path": env.p("a"), "content": "x" }))
        .await;
    assert!(r.is_error, "{}", r.text());
    assert!(std::fs::symlink_metadata(env.path("a"))
        .unwrap()
        .file_type()
        .is_symlink());
}
