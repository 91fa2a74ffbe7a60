//! Background agents and worktree isolation (SPEC §15), with a scripted
//! model loop and real processes and git.

use std::process::Command;
use std::time::{Duration, Instant};

use baton::engine::subagent::{SubagentLimits, SubagentService};
use baton::engine::{AllowAllUnsafe, Outcome};
use baton::Engine;
use baton_test_support::{procs, scripted};
use common::{call, run_all};
use futures::StreamExt;
use scripted::*;
use serde_json::json;

use crate::common;

fn setup(dir: &std::path::Path, cwd: &std::path::Path) -> (Engine, std::sync::Arc<Scripted>) {
    let runner = Scripted::new();
    let pool = baton::BuiltinConfig::default()
        .pool(&AllowAllUnsafe)
        .unwrap();
    let engine = Engine::builder(pool)
        .cwd(cwd)
        .state_dir(dir.join("state"))
        .subagent_service(SubagentService::with_limits(
            runner.clone(),
            SubagentLimits::default(),
        ))
        .allow_all_unsafe()
        .build()
        .expect("the engine builds");
    (engine, runner)
}

fn background(id: &str, prompt: String) -> baton::ToolUse {
    call(
        id,
        "Agent",
        json!({"description": "in the background", "prompt": prompt, "run_in_background": true}),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_agent_outlives_its_call_and_reports_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, _runner) = setup(dir.path(), dir.path());
    let mut notes = engine.notifications();
    let t0 = Instant::now();
    let run = run_all(
        &engine,
        vec![background(
            "bg",
            script(vec![bash("b", "sleep 6; echo bg-done")], "finished"),
        )],
    )
    .await;
    let r = run.result("bg");
    assert_eq!(r.outcome, Outcome::Success, "{}", r.text());
    assert!(r.text().contains("Async agent launched"), "{}", r.text());
    assert!(
        t0.elapsed() < Duration::from_millis(4000),
        "the call waited for the agent"
    );
    let note = loop {
        let event = tokio::time::timeout(Duration::from_secs(20), notes.next())
            .await
            .expect("no notification")
            .expect("stream ended");
        if let baton::Event::Notification(n) = event {
            if n.kind == "agent_finished" {
                break n;
            }
        }
    };
    let data = note.data.unwrap();
    assert_eq!(data["status"], "completed", "{data}");
    let file = data["output_file"].as_str().unwrap();
    let report = std::fs::read_to_string(file).unwrap();
    assert!(
        report.contains("finished") && report.contains("bg-done"),
        "{report}"
    );
    assert!(r.text().contains(file), "{}", r.text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_stops_background_agents_and_their_processes() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, _runner) = setup(dir.path(), dir.path());
    let mut notes = engine.notifications();
    let pidfile = dir.path().join("pid");
    let cmd = format!("echo $$ > {}; exec sleep 30", pidfile.display());
    run_all(
        &engine,
        vec![background("bg", script(vec![bash("b", &cmd)], "x"))],
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while procs::pids_in(&pidfile).is_empty() {
        assert!(
            Instant::now() < deadline,
            "the background command never started"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    engine.shutdown();
    let note = loop {
        let event = tokio::time::timeout(Duration::from_secs(20), notes.next())
            .await
            .expect("no notification")
            .expect("stream ended");
        if let baton::Event::Notification(n) = event {
            if n.kind == "agent_finished" {
                break n;
            }
        }
    };
    assert!(note.data.is_some());
    let left = procs::survivors(&procs::pids_in(&pidfile)).await;
    assert!(left.is_empty(), "processes left: {left:?}");
}

fn git(dir: &std::path::Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// `root/repo`, a repository with one commit of `a.txt`.
fn one_commit_repo(root: &std::path::Path) -> std::path::PathBuf {
    let repo = root.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q"]);
    std::fs::write(repo.join("a.txt"), "a\n").unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "first"]);
    repo
}

fn isolated(id: &str, prompt: String) -> baton::ToolUse {
    call(
        id,
        "Agent",
        json!({"description": "isolated work", "prompt": prompt, "isolation": "worktree"}),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worktree_is_kept_with_changes_and_removed_without() {
    let dir = tempfile::tempdir().unwrap();
    let repo = one_commit_repo(dir.path());
    let (engine, runner) = setup(dir.path(), &repo);

    let run = run_all(
        &engine,
        vec![isolated(
            "w",
            script(vec![bash("b", "echo new > b.txt; pwd")], "wrote"),
        )],
    )
    .await;
    let text = run.result("w").text();
    assert_eq!(run.result("w").outcome, Outcome::Success, "{text}");
    let rec = &runner.all()[0];
    let kept = text
        .lines()
        .find_map(|l| l.strip_prefix("worktreePath: "))
        .unwrap_or_else(|| panic!("no worktree path in {text}"));
    assert!(
        text.contains(&format!("worktreeBranch: baton/{}", rec.agent_id)),
        "{text}"
    );
    assert!(std::path::Path::new(kept).join("b.txt").exists());
    assert!(
        !repo.join("b.txt").exists(),
        "the change stayed in the worktree"
    );
    assert!(kept.starts_with(dir.path().join("state").to_str().unwrap()));

    let run = run_all(
        &engine,
        vec![isolated("r", script(vec![bash("l", "ls")], "looked"))],
    )
    .await;
    let text = run.result("r").text();
    assert_eq!(run.result("r").outcome, Outcome::Success, "{text}");
    assert!(
        text.contains("a.txt") && !text.contains("worktreePath"),
        "{text}"
    );
    let second = &runner.all()[1];
    assert!(!dir
        .path()
        .join("state/worktrees")
        .join(&second.agent_id)
        .exists());
    let branches = git(&repo, &["branch", "--list", "baton/*"]);
    assert!(
        branches.contains(&rec.agent_id) && !branches.contains(&second.agent_id),
        "{branches}"
    );

    // Outside a repository, isolation is a clear error.
    let plain = tempfile::tempdir().unwrap();
    let (engine, _) = setup(plain.path(), plain.path());
    let run = run_all(&engine, vec![isolated("x", script(vec![], "x"))]).await;
    assert!(
        run.result("x").text().contains("needs a git repository"),
        "{}",
        run.result("x").text()
    );
}

/// Creating a worktree (a branch, files, git's checkout) is Baton writing:
/// in plan mode an isolated agent is refused before anything is made,
/// while the same agent without isolation runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_mode_refuses_an_isolated_agent() {
    let dir = tempfile::tempdir().unwrap();
    let repo = one_commit_repo(dir.path());
    let runner = Scripted::new();
    let pool = baton::BuiltinConfig::default()
        .pool(&AllowAllUnsafe)
        .unwrap();
    let engine = Engine::builder(pool)
        .cwd(&repo)
        .state_dir(dir.path().join("state"))
        .permission_mode(baton::engine::PermissionMode::Plan)
        .subagent_service(SubagentService::with_limits(
            runner.clone(),
            SubagentLimits::default(),
        ))
        .build()
        .expect("the engine builds");
    let run = run_all(
        &engine,
        vec![
            isolated("w", script(vec![], "planned")),
            call(
                "p",
                "Agent",
                json!({"description": "look", "prompt": script(vec![], "looked")}),
            ),
        ],
    )
    .await;
    let refused = run.result("w");
    assert_eq!(refused.outcome, Outcome::Denied, "{}", refused.text());
    assert!(refused.text().contains("plan mode"), "{}", refused.text());
    assert_eq!(run.result("p").outcome, Outcome::Success);
    let branches = git(&repo, &["branch", "--list", "baton/*"]);
    assert!(branches.trim().is_empty(), "a branch was made: {branches}");
    assert!(!dir.path().join("state/worktrees").exists());
}
