//! The sealed git against a real repository with real plants: each plant
//! is first shown to run under a plain `git` (so the test can fail), then
//! shown to run nothing under the sealed one.

use std::path::Path;
use std::process::Command;

use super::{git, query, Writes};

fn plain_git(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git runs")
}

fn ok(dir: &Path, args: &[&str]) {
    let out = plain_git(dir, args);
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A repository with one commit, then (after the commit, so that setting it
/// up runs nothing) a hook, an fsmonitor command, a required smudge/clean
/// filter named by `.gitattributes` and a long-running `process` filter
/// named by `.git/info/attributes`, each touching its own marker in
/// `marks`.
fn planted(root: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let repo = root.join("repo");
    let marks = root.join("marks");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::create_dir_all(&marks).unwrap();
    ok(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("a.txt"), "a\n").unwrap();
    std::fs::write(repo.join("b.dat"), "b\n").unwrap();
    std::fs::write(repo.join(".gitattributes"), "*.txt filter=evil\n").unwrap();
    ok(&repo, &["add", "."]);
    ok(&repo, &["commit", "-qm", "first"]);
    let m = marks.display();
    let script = |name: &str, body: &str| {
        let path = root.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    };
    let smudge = script("smudge.sh", &format!("touch {m}/smudge; cat"));
    let clean = script("clean.sh", &format!("touch {m}/clean; cat"));
    let process = script("process.sh", &format!("touch {m}/process; exit 1"));
    let fsmonitor = script("fsmonitor.sh", &format!("touch {m}/fsmonitor; exit 1"));
    let hooks = repo.join(".git/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    for hook in ["post-checkout", "reference-transaction"] {
        let body = format!("touch {m}/{hook}");
        let path = script(&format!("{hook}.sh"), &body);
        std::fs::copy(&path, hooks.join(hook)).unwrap();
    }
    let config = [
        ("filter.evil.smudge", smudge.display().to_string()),
        ("filter.evil.clean", clean.display().to_string()),
        ("filter.evil.required", "true".into()),
        ("filter.a.b.process", process.display().to_string()),
        ("core.fsmonitor", fsmonitor.display().to_string()),
    ];
    for (key, value) in &config {
        ok(&repo, &["config", key, value]);
    }
    std::fs::create_dir_all(repo.join(".git/info")).unwrap();
    std::fs::write(repo.join(".git/info/attributes"), "*.dat filter=a.b\n").unwrap();
    (repo, marks)
}

fn marks_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn planted_hooks_filters_and_fsmonitor_run_under_plain_git_but_not_sealed() {
    // The plants are real: a plain git runs them.
    let control = tempfile::tempdir().unwrap();
    let (repo, marks) = planted(control.path());
    let wt = control.path().join("wt-plain");
    let _ = plain_git(
        &repo,
        &["worktree", "add", "-q", "-b", "p", wt.to_str().unwrap()],
    );
    let _ = plain_git(&wt, &["status", "--porcelain"]);
    let ran = marks_in(&marks);
    for mark in ["smudge", "process", "reference-transaction", "fsmonitor"] {
        assert!(ran.contains(&mark.to_string()), "plain git ran {ran:?}");
    }

    let dir = tempfile::tempdir().unwrap();
    let (repo, marks) = planted(dir.path());
    let wt = dir.path().join("wts/sealed");
    let target = wt.to_str().unwrap();
    git(
        &repo,
        &["worktree", "add", "-q", "-b", "s", target, "HEAD"],
        Writes::GitDirAnd(&wt),
    )
    .await
    .unwrap();
    // The checkout is there, unfiltered.
    assert_eq!(std::fs::read_to_string(wt.join("a.txt")).unwrap(), "a\n");
    std::fs::write(wt.join("a.txt"), "changed\n").unwrap();
    let status = query(&wt, &["status", "--porcelain"]).await.unwrap();
    assert!(status.contains("a.txt"), "{status}");
    query(&wt, &["log", "--oneline", "main..HEAD", "--"])
        .await
        .unwrap();
    git(
        &repo,
        &["worktree", "remove", "--force", target],
        Writes::GitDirAnd(&wt),
    )
    .await
    .unwrap();
    git(&repo, &["branch", "-D", "s"], Writes::GitDir)
        .await
        .unwrap();
    assert!(!wt.exists());
    assert_eq!(
        marks_in(&marks),
        Vec::<String>::new(),
        "sealed git ran these"
    );
}

#[tokio::test]
async fn a_query_writes_nothing_and_a_writer_writes_only_the_git_dir() {
    let dir = tempfile::tempdir().unwrap();
    let (repo, _) = planted(dir.path());
    let confined = baton_engine::sandbox::support().missing().is_none();
    let made = query(&repo, &["branch", "from-a-query"]).await;
    let listed = query(&repo, &["branch", "--list"]).await.unwrap();
    if confined {
        assert!(made.is_err(), "a query created a branch: {listed}");
        assert!(!listed.contains("from-a-query"), "{listed}");
    } else {
        eprintln!("no kernel confinement here: only the seal is tested");
    }
    git(&repo, &["branch", "from-a-writer"], Writes::GitDir)
        .await
        .unwrap();
    let listed = query(&repo, &["branch", "--list"]).await.unwrap();
    assert!(listed.contains("from-a-writer"), "{listed}");
    if confined {
        // The git directory is writable, the working tree is not: a
        // checkout of another commit's files into it fails.
        let wrote = git(&repo, &["checkout", "-q", "-b", "other"], Writes::GitDir).await;
        assert!(wrote.is_ok(), "{wrote:?}");
        std::fs::remove_file(repo.join("a.txt")).unwrap();
        let restored = git(&repo, &["checkout", "--", "a.txt"], Writes::GitDir).await;
        assert!(restored.is_err(), "git wrote the working tree");
        assert!(!repo.join("a.txt").exists());
    }
}

#[tokio::test]
async fn outside_a_repository_the_error_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let err = super::toplevel(dir.path()).await.unwrap_err();
    assert!(err.contains("not inside a git repository"), "{err}");
}
