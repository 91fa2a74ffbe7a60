//! MCP tasks, client side, against real servers that run tools as tasks
//! (protocol 2025-11-25): servers/tasks.py on the official Python SDK's
//! mcp 1.30.0 (its own venv, .ci/deps.d/35-mcp-tasks.sh), and the
//! TypeScript SDK's server-everything (`simulate-research-query`). The
//! Python server appends each execution and each `tasks/cancel` it sees to
//! a log file, so the tests count what really ran.

use std::io::BufRead;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use baton_engine::{CancelReason, CancelScope, Progress, ProgressSink};
use baton_mcp::ServerSpec;
use baton_test_support::proxy::Proxy;
use common::*;
use parking_lot::Mutex;
use serde_json::json;

use crate::common;

/// The venv with the tasks-capable Python SDK; fails (never skips) when
/// missing.
fn tasks_python() -> String {
    let python = workspace().join(".ci/venv-mcp-tasks/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run ./.ci/deps (35-mcp-tasks.sh) to install mcp 1.30.0",
        python.display()
    );
    python.display().to_string()
}

fn stdio_server(log: &Path, extra: &[&str]) -> ServerSpec {
    let mut args = vec![
        "-u".to_string(),
        script("tasks.py"),
        "--log".into(),
        log.display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    ServerSpec::stdio("tk", tasks_python(), args)
}

/// The server's log, one entry per line.
fn log_lines(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

fn count(lines: &[String], line: &str) -> usize {
    lines.iter().filter(|l| *l == line).count()
}

/// Progress reports of one call, collected.
fn recorder() -> (ProgressSink, Arc<Mutex<Vec<Progress>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = {
        let seen = Arc::clone(&seen);
        ProgressSink::new(move |p| seen.lock().push(p))
    };
    (sink, seen)
}

async fn wait_until(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !check() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_call_runs_as_a_task_and_answers_with_its_result() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let clients = start(vec![stdio_server(&log, &[])], dir.path()).await;
    let (tools, _) = clients.tools();
    let out = call(
        &tools,
        "mcp__tk__slow_job",
        json!({"label": "a", "steps": 4, "step_ms": 300}),
        dir.path(),
    )
    .await
    .unwrap();
    assert!(!out.is_error, "{}", text(&out));
    assert_eq!(text(&out), "a finished after 4 steps");
    let lines = log_lines(&log);
    assert_eq!(
        count(&lines, "task slow_job"),
        1,
        "sent as a task: {lines:?}"
    );
    assert_eq!(count(&lines, "start a"), 1, "{lines:?}");
    // A tool that only runs as a task works too.
    let out = call(&tools, "mcp__tk__task_only", json!({}), dir.path())
        .await
        .unwrap();
    assert_eq!(text(&out), "ran as a task", "{}", text(&out));
    clients.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_messages_of_a_task_become_the_calls_progress() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let clients = start(vec![stdio_server(&log, &[])], dir.path()).await;
    let (tools, _) = clients.tools();
    let (sink, seen) = recorder();
    let ctx = ctx_with(dir.path(), CancelScope::new(), sink);
    let tool = find(&tools, "mcp__tk__slow_job");
    let out = call_with(
        &tool,
        json!({"label": "p", "steps": 4, "step_ms": 500}),
        ctx,
    )
    .await
    .unwrap();
    assert_eq!(text(&out), "p finished after 4 steps");
    let seen = seen.lock().clone();
    let steps: Vec<&str> = seen
        .iter()
        .map(|p| p.message.as_str())
        .filter(|m| m.starts_with("step "))
        .collect();
    assert!(steps.len() >= 2, "status messages as progress: {seen:?}");
    let mut sorted = steps.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(steps, sorted, "in order, each once: {seen:?}");
    let data = seen[0].data.clone().unwrap_or_default();
    assert!(data["taskId"].is_string(), "{data}");
    clients.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_task_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let clients = start(vec![stdio_server(&log, &[])], dir.path()).await;
    let (tools, _) = clients.tools();
    let out = call(&tools, "mcp__tk__failing_job", json!({}), dir.path())
        .await
        .unwrap();
    let said = text(&out);
    assert!(out.is_error, "{said}");
    assert!(
        said.contains("mcp__tk__failing_job failed on MCP server \"tk\" (task ")
            && said.contains("the disk is full"),
        "{said}"
    );
    clients.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupt_sends_tasks_cancel_and_the_work_stops() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let clients = start(vec![stdio_server(&log, &[])], dir.path()).await;
    let (tools, _) = clients.tools();
    let (sink, seen) = recorder();
    let cancel = CancelScope::new();
    let ctx = ctx_with(dir.path(), cancel.clone(), sink);
    let tool = find(&tools, "mcp__tk__slow_job");
    let call = tokio::spawn(async move {
        call_with(
            &tool,
            json!({"label": "c", "steps": 100, "step_ms": 200}),
            ctx,
        )
        .await
    });
    wait_until("the task's second step or later", || {
        seen.lock()
            .iter()
            .any(|p| p.message.starts_with("step ") && p.message != "step 1 of 100")
    })
    .await;
    cancel.cancel(CancelReason::User);
    let out = call.await.unwrap().unwrap();
    let said = text(&out);
    assert!(out.is_error, "{said}");
    assert!(
        said.contains("was cancelled before it finished (the server was told to cancel task"),
        "{said}"
    );
    assert!(said.contains("Its last progress report: \"step "), "{said}");
    wait_until("the work to stop", || {
        count(&log_lines(&log), "stopped c") == 1
    })
    .await;
    let lines = log_lines(&log);
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("cancel ")).count(),
        1,
        "the server saw one tasks/cancel: {lines:?}"
    );
    assert_eq!(count(&lines, "done c"), 0, "{lines:?}");
    clients.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_total_limit_cancels_the_task() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let mut spec = stdio_server(&log, &[]);
    spec.timeout = Some(Duration::from_millis(1500));
    let clients = start(vec![spec], dir.path()).await;
    let (tools, _) = clients.tools();
    let out = call(
        &tools,
        "mcp__tk__slow_job",
        json!({"label": "t", "steps": 100, "step_ms": 200}),
        dir.path(),
    )
    .await
    .unwrap();
    let said = text(&out);
    assert!(
        said.contains("was stopped: it ran for 1.5 s, the total limit"),
        "{said}"
    );
    assert!(said.contains("told to cancel task"), "{said}");
    wait_until("the work to stop", || {
        count(&log_lines(&log), "stopped t") == 1
    })
    .await;
    clients.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_the_tasks_capability_is_called_as_before() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    // The tools still say they take tasks; without the capability that
    // must not count.
    let clients = start(vec![stdio_server(&log, &["--no-tasks"])], dir.path()).await;
    let (tools, _) = clients.tools();
    let out = call(
        &tools,
        "mcp__tk__slow_job",
        json!({"label": "n", "steps": 1, "step_ms": 10}),
        dir.path(),
    )
    .await
    .unwrap();
    assert_eq!(text(&out), "n finished after 1 steps");
    let out = call(&tools, "mcp__tk__plain_tool", json!({}), dir.path())
        .await
        .unwrap();
    assert_eq!(text(&out), "plain answer");
    let lines = log_lines(&log);
    assert_eq!(count(&lines, "plain slow_job"), 1, "{lines:?}");
    assert_eq!(count(&lines, "task slow_job"), 0, "{lines:?}");
    clients.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_lost_with_its_server_is_reported_and_not_run_again() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let clients = start(vec![stdio_server(&log, &[])], dir.path()).await;
    let (tools, _) = clients.tools();
    let (sink, seen) = recorder();
    let ctx = ctx_with(dir.path(), CancelScope::new(), sink);
    let tool = find(&tools, "mcp__tk__slow_job");
    let call = tokio::spawn(async move {
        call_with(
            &tool,
            json!({"label": "k", "steps": 100, "step_ms": 200}),
            ctx,
        )
        .await
    });
    wait_until("the task's first step", || !seen.lock().is_empty()).await;
    let first = clients.servers()[0].pid().unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(first),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    // The server is restarted (an in-memory task store: the task is gone);
    // Baton asks the new one about the same task instead of calling again.
    let out = call.await.unwrap().unwrap();
    let said = text(&out);
    assert!(out.is_error, "{said}");
    assert!(
        said.contains("no longer knows task")
            && said.contains("after the connection to it was re-made")
            && said.contains("did not run twice"),
        "{said}"
    );
    assert_ne!(clients.servers()[0].pid(), Some(first), "restarted");
    let lines = log_lines(&log);
    assert_eq!(count(&lines, "start k"), 1, "ran once: {lines:?}");
    assert_eq!(count(&lines, "task slow_job"), 1, "sent once: {lines:?}");
    clients.shutdown().await;
}

/// The Python tasks server over streamable HTTP, in its own process group.
struct HttpServer {
    child: std::process::Child,
    port: u16,
}

impl HttpServer {
    fn start(log: &Path) -> HttpServer {
        let mut child = std::process::Command::new(tasks_python())
            .arg("-u")
            .arg(script("tasks.py"))
            .args(["--http", "0", "--log"])
            .arg(log)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = match line.trim().strip_prefix("listening on ").map(str::parse) {
            Some(Ok(port)) => port,
            _ => panic!("the tasks server did not start (it printed {line:?})"),
        };
        HttpServer { child, port }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let group = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_survives_a_dropped_connection_without_running_twice() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let server = HttpServer::start(&log);
    let proxy = Proxy::start(([127, 0, 0, 1], server.port).into()).await;
    let url = format!("http://{}/mcp", proxy.addr);
    let clients = start(vec![ServerSpec::http("tk", url)], dir.path()).await;
    assert!(
        clients.diagnostics().is_empty(),
        "{:?}",
        clients.diagnostics()
    );
    let (tools, _) = clients.tools();
    let (sink, seen) = recorder();
    let ctx = ctx_with(dir.path(), CancelScope::new(), sink);
    let tool = find(&tools, "mcp__tk__slow_job");
    let call = tokio::spawn(async move {
        call_with(
            &tool,
            json!({"label": "r", "steps": 16, "step_ms": 250}),
            ctx,
        )
        .await
    });
    wait_until("the task's second step or later", || {
        seen.lock()
            .iter()
            .any(|p| p.message.starts_with("step ") && p.message != "step 1 of 16")
    })
    .await;
    // Long enough for several polls to meet the outage.
    let cut = proxy.cut_for(Duration::from_millis(1500)).await;
    assert!(cut > 0, "the proxy had connections to cut");
    let out = call.await.unwrap().unwrap();
    assert_eq!(text(&out), "r finished after 16 steps", "{}", text(&out));
    let lines = log_lines(&log);
    assert_eq!(count(&lines, "task slow_job"), 1, "sent once: {lines:?}");
    assert_eq!(count(&lines, "start r"), 1, "ran once: {lines:?}");
    let steps = seen
        .lock()
        .iter()
        .filter(|p| p.message.starts_with("step "))
        .count();
    assert!(
        steps >= 3,
        "status went on after the cut: {:?}",
        seen.lock()
    );
    clients.shutdown().await;
}

/// `simulate-research-query` of the TypeScript SDK's server-everything
/// runs only as a task (`taskSupport: required`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everythings_task_tool_runs_as_a_task() {
    let dir = tempfile::tempdir().unwrap();
    let spec = ServerSpec::stdio(
        "every",
        node_bin("mcp-server-everything"),
        vec!["stdio".to_string()],
    );
    let clients = start(vec![spec], dir.path()).await;
    let (tools, _) = clients.tools();
    let (sink, seen) = recorder();
    let ctx = ctx_with(dir.path(), CancelScope::new(), sink);
    let tool = find(&tools, "mcp__every__simulate-research-query");
    let out = call_with(&tool, json!({"topic": "tasks"}), ctx)
        .await
        .unwrap();
    let said = text(&out);
    assert!(!out.is_error, "{said}");
    assert!(said.contains("# Research Report: tasks"), "{said}");
    let seen = seen.lock().clone();
    assert!(
        seen.iter().any(|p| p.message.ends_with("...")),
        "its stages as progress: {seen:?}"
    );
    clients.shutdown().await;
}
