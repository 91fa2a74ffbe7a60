//! The worktree tools on real git repositories, one call at a time through
//! the pipeline, carrying the context from call to call as a batch does.

use std::path::{Path, PathBuf};
use std::process::Command;

use baton_engine::{Context, Outcome, ToolContext};

use super::*;
use crate::test_support::Harness;

fn run_git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A repository with one commit, in the harness's tempdir.
fn repo(h: &Harness) -> PathBuf {
    let repo = std::fs::canonicalize(h.dir.path()).unwrap().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    run_git(&repo, &["init", "-q"]);
    std::fs::write(repo.join("a.txt"), "a\n").unwrap();
    run_git(&repo, &["add", "."]);
    run_git(&repo, &["commit", "-q", "-m", "first"]);
    repo
}

/// Runs one call in `context` and returns the result and the context after.
async fn step(
    h: &Harness,
    context: &Context,
    tool: &str,
    input: Value,
) -> (baton_engine::CallResult, Context) {
    let ctx = ToolContext::standalone("c", context.clone(), h.session.clone());
    let mut r = h.run_with(tool, input, ctx).await;
    let after = match r.modifier.take() {
        Some(m) => m.apply(context.clone()),
        None => context.clone(),
    };
    (r, after)
}

#[tokio::test]
async fn a_named_worktree_is_made_entered_and_removed_when_clean() {
    let h = Harness::new(tools().unwrap());
    let repo = repo(&h);
    let start = Context::new(&repo);
    let (r, inside) = step(&h, &start, "EnterWorktree", json!({"name": "feat/x"})).await;
    assert_eq!(r.outcome, Outcome::Success, "{}", r.text());
    let wt = repo.join(".claude/worktrees/feat+x");
    assert_eq!(inside.cwd, wt);
    assert_eq!(inside.roots.as_slice(), std::slice::from_ref(&wt));
    assert_eq!(
        r.response.as_ref().unwrap()["worktreeBranch"],
        "worktree-feat+x"
    );
    let listed = run_git(&repo, &["worktree", "list", "--porcelain"]);
    assert!(
        listed.contains(&format!("worktree {}", wt.display())),
        "{listed}"
    );
    assert!(
        listed.contains("branch refs/heads/worktree-feat+x"),
        "{listed}"
    );
    assert!(wt.join("a.txt").is_file());

    // A second new worktree while in one is refused; a path switch is not.
    let (r, _) = step(&h, &inside, "EnterWorktree", json!({"name": "other"})).await;
    assert_eq!(r.outcome, Outcome::ValidationFailed, "{}", r.text());

    let (r, back) = step(&h, &inside, "ExitWorktree", json!({"action": "remove"})).await;
    assert_eq!(r.outcome, Outcome::Success, "{}", r.text());
    assert_eq!(back.cwd, repo);
    assert_eq!(back.roots.as_slice(), std::slice::from_ref(&repo));
    assert!(!wt.exists());
    let branches = run_git(&repo, &["branch", "--list"]);
    assert!(!branches.contains("worktree-feat+x"), "{branches}");
    // Out of the session: ExitWorktree has nothing to leave.
    let (r, _) = step(&h, &back, "ExitWorktree", json!({"action": "keep"})).await;
    assert_eq!(r.outcome, Outcome::ValidationFailed, "{}", r.text());
}

#[tokio::test]
async fn remove_refuses_and_lists_work_that_would_be_lost_until_discarded() {
    let h = Harness::new(tools().unwrap());
    let repo = repo(&h);
    let (_, inside) = step(
        &h,
        &Context::new(&repo),
        "EnterWorktree",
        json!({"name": "w"}),
    )
    .await;
    let wt = inside.cwd.clone();
    std::fs::write(wt.join("b.txt"), "b\n").unwrap();
    run_git(&wt, &["add", "b.txt"]);
    run_git(&wt, &["commit", "-q", "-m", "work in the worktree"]);
    std::fs::write(wt.join("c.txt"), "c\n").unwrap();

    let (r, after) = step(&h, &inside, "ExitWorktree", json!({"action": "remove"})).await;
    assert!(r.is_error, "{}", r.text());
    let text = r.text();
    assert!(
        text.contains("c.txt") && text.contains("work in the worktree"),
        "{text}"
    );
    assert!(text.contains("not on main"), "{text}");
    assert_eq!(after.cwd, wt, "a refusal does not move the session");
    assert!(wt.exists());

    // Merged into the original branch, the commit is no longer at risk.
    run_git(&repo, &["merge", "-q", "--ff-only", "worktree-w"]);
    let (r, _) = step(&h, &inside, "ExitWorktree", json!({"action": "remove"})).await;
    assert!(
        r.is_error && !r.text().contains("work in the worktree"),
        "{}",
        r.text()
    );

    let (r, back) = step(
        &h,
        &inside,
        "ExitWorktree",
        json!({"action": "remove", "discard_changes": true}),
    )
    .await;
    assert_eq!(r.outcome, Outcome::Success, "{}", r.text());
    assert_eq!(r.response.as_ref().unwrap()["discardedFiles"], 1);
    assert_eq!(back.cwd, repo);
    assert!(!wt.exists());
}

#[tokio::test]
async fn keep_leaves_the_worktree_and_path_enters_only_listed_worktrees() {
    let h = Harness::new(tools().unwrap());
    let repo = repo(&h);
    let (_, inside) = step(
        &h,
        &Context::new(&repo),
        "EnterWorktree",
        json!({"name": "k"}),
    )
    .await;
    let (r, back) = step(&h, &inside, "ExitWorktree", json!({"action": "keep"})).await;
    assert_eq!(r.outcome, Outcome::Success, "{}", r.text());
    assert!(inside.cwd.is_dir(), "keep leaves it on disk");
    assert_eq!(back.cwd, repo);

    // Back in by path (relative to the working directory).
    let (r, again) = step(
        &h,
        &back,
        "EnterWorktree",
        json!({"path": ".claude/worktrees/k"}),
    )
    .await;
    assert_eq!(r.outcome, Outcome::Success, "{}", r.text());
    assert_eq!(again.cwd, inside.cwd);
    // Entered by path: never removed.
    let (r, _) = step(&h, &again, "ExitWorktree", json!({"action": "remove"})).await;
    assert!(r.is_error && r.text().contains("keep"), "{}", r.text());

    // A plain directory, the repository's .git, and a symlink to a
    // directory that is not a worktree are all refused.
    let plain = h.dir.path().join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    std::os::unix::fs::symlink(&plain, repo.join("link")).unwrap();
    for path in [plain.to_str().unwrap(), ".git", "link", "../repo/.claude"] {
        let (r, after) = step(&h, &back, "EnterWorktree", json!({"path": path})).await;
        assert!(r.is_error, "{path}: {}", r.text());
        assert_eq!(after.cwd, repo, "{path}");
    }
}

#[tokio::test]
async fn crafted_names_and_links_make_nothing() {
    let h = Harness::new(tools().unwrap());
    let repo = repo(&h);
    let start = Context::new(&repo);
    for name in ["../../escape", "--orphan", "a/../b", "x y", "a;b", ".git"] {
        let (r, after) = step(&h, &start, "EnterWorktree", json!({"name": name})).await;
        assert_eq!(r.outcome, Outcome::ValidationFailed, "{name}: {}", r.text());
        assert_eq!(after.cwd, repo);
    }
    let (r, _) = step(
        &h,
        &start,
        "EnterWorktree",
        json!({"name": "a", "path": "b"}),
    )
    .await;
    assert_eq!(r.outcome, Outcome::ValidationFailed, "{}", r.text());
    assert!(!repo.join(".claude").exists());
    assert!(!h.dir.path().join("escape").exists());

    // A committed symlink at .claude could send the worktree elsewhere.
    let elsewhere = h.dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, repo.join(".claude")).unwrap();
    let (r, after) = step(&h, &start, "EnterWorktree", json!({"name": "n"})).await;
    assert!(r.is_error && r.text().contains("symlink"), "{}", r.text());
    assert_eq!(after.cwd, repo);
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
}

#[tokio::test]
async fn outside_a_repository_it_says_so() {
    let h = Harness::new(tools().unwrap());
    let dir = std::fs::canonicalize(h.dir.path()).unwrap();
    let (r, after) = step(&h, &Context::new(&dir), "EnterWorktree", json!({})).await;
    assert!(
        r.is_error && r.text().contains("not inside a git repository"),
        "{}",
        r.text()
    );
    assert_eq!(after.cwd, dir);
}
