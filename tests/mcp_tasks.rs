//! MCP tasks on `baton mcp serve`: a real client of protocol 2025-11-25 (the
//! official Python SDK's mcp 1.30.0, `experimental` tasks, in the venv of
//! .ci/deps.d/35-mcp-tasks.sh) over streamable HTTP and stdio, a restart of
//! the server on the same state directory, and Baton's own MCP client,
//! which gets a task handle (the SEP-2663 extension) for a slow call.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use baton::engine::{CancelScope, Context, Progress, ProgressSink, Session, ToolContext};
use baton::mcp::{
    ClientOptions, ElicitRequest, ElicitResponse, Elicitor, FnElicitor, McpClients, ServerSpec,
};
use baton_test_support::procs;
use serde_json::json;

use crate::support::BATON;

const CLIENT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/mcp_server/tasks_client.py"
);

/// The venv with the tasks-capable Python SDK; fails (never skips) when
/// missing.
fn tasks_python() -> PathBuf {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/venv-mcp-tasks/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run ./.ci/deps (35-mcp-tasks.sh) to install mcp 1.30.0",
        python.display()
    );
    python
}

/// Settings that allow every Bash command (nothing asks).
fn settings(work: &Path) -> String {
    let path = work.join("settings.json");
    std::fs::write(&path, r#"{"permissions": {"allow": ["Bash"]}}"#).unwrap();
    path.display().to_string()
}

/// `baton mcp serve --http` on `work` (state in `work/.state`); killed
/// on drop.
struct Served {
    child: Child,
    port: u16,
}

impl Served {
    fn start(work: &Path) -> Served {
        let mut child = crate::support::baton()
            .args(["mcp", "serve", "--http", "127.0.0.1:0", "--cwd"])
            .arg(work)
            .args(["--settings", &settings(work), "--state-dir"])
            .arg(work.join(".state"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .env_remove("BATON_MCP_TOKEN")
            .spawn()
            .unwrap();
        let url = baton_test_support::worker::listening_url(child.stderr.take().unwrap());
        let port = baton_test_support::worker::port_of(&url);
        Served { child, port }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs one scenario of the Python client; its `key=value` lines.
fn client(url: &str, work: &Path, args: &[&str], env: &[(&str, &str)]) -> Vec<(String, String)> {
    let out = Command::new(tasks_python())
        .arg(CLIENT)
        .arg(url)
        .arg(work)
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.lines().any(|l| l == "ok"),
        "the tasks client failed ({args:?})\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    stdout
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn value<'a>(said: &'a [(String, String)], key: &str) -> &'a str {
    said.iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no {key}= in {said:?}"))
}

fn runs(work: &Path, name: &str) -> usize {
    std::fs::read_to_string(work.join(name))
        .unwrap_or_default()
        .lines()
        .count()
}

fn workdir() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().canonicalize().unwrap();
    (dir, work)
}

#[test]
fn a_python_client_runs_a_call_as_a_task_over_http() {
    let (_dir, work) = workdir();
    let server = Served::start(&work);
    let said = client(&server.url(), &work, &["follow"], &[]);
    assert!(value(&said, "status").contains("Running"), "{said:?}");
    assert_eq!(runs(&work, "count-follow"), 1, "ran once");
}

#[test]
fn a_python_client_runs_a_call_as_a_task_over_stdio() {
    let (_dir, work) = workdir();
    let url = format!("stdio:{BATON}:{}", settings(&work));
    let said = client(&url, &work, &["follow"], &[]);
    assert!(value(&said, "status").contains("Running"), "{said:?}");
    assert_eq!(runs(&work, "count-follow"), 1, "ran once");
}

#[test]
fn a_task_outlives_the_connection_that_started_it() {
    let (_dir, work) = workdir();
    let server = Served::start(&work);
    client(&server.url(), &work, &["reconnect"], &[]);
    assert_eq!(runs(&work, "count-reconnect"), 1, "ran once");
}

#[test]
fn tasks_cancel_stops_the_command_and_its_process() {
    let (_dir, work) = workdir();
    let server = Served::start(&work);
    let said = client(&server.url(), &work, &["cancel"], &[]);
    let pid: i32 = value(&said, "pid").parse().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while procs::alive(pid) {
        assert!(
            Instant::now() < deadline,
            "the command's process {pid} still runs"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn tasks_are_answered_after_a_server_restart() {
    let (_dir, work) = workdir();
    let mut server = Served::start(&work);
    let done = client(
        &server.url(),
        &work,
        &["start"],
        &[("TASK_COMMAND", "echo kept from the first life")],
    );
    let done = value(&done, "task").to_string();
    let running = client(
        &server.url(),
        &work,
        &["start"],
        &[("TASK_COMMAND", "echo started >> count-lost; exec sleep 300")],
    );
    let running = value(&running, "task").to_string();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let said = client(&server.url(), &work, &["show", &done], &[]);
        if value(&said, "status") == "completed" && runs(&work, "count-lost") == 1 {
            break;
        }
        assert!(Instant::now() < deadline, "{said:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
    // The worker dies with one task done and one running.
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    let server = Served::start(&work);
    let said = client(&server.url(), &work, &["show", &done], &[]);
    assert_eq!(value(&said, "status"), "completed", "{said:?}");
    assert!(
        value(&said, "result").contains("kept from the first life"),
        "{said:?}"
    );
    let said = client(&server.url(), &work, &["show", &running], &[]);
    assert_eq!(value(&said, "status"), "failed", "{said:?}");
    assert!(value(&said, "result").contains("was lost"), "{said:?}");
    assert_eq!(runs(&work, "count-lost"), 1, "not run again");
}

/// `baton mcp serve` on stdio in `work` with `settings`, as a server of
/// Baton's own MCP client.
async fn baton_client_of(
    work: &Path,
    settings: String,
    elicitor: Option<Arc<dyn Elicitor>>,
) -> McpClients {
    let spec = ServerSpec::stdio(
        "b",
        BATON,
        vec![
            "mcp".into(),
            "serve".into(),
            "--cwd".into(),
            work.display().to_string(),
            "--settings".into(),
            settings,
            "--state-dir".into(),
            work.join(".state").display().to_string(),
        ],
    );
    let mut options = ClientOptions::from_env(work, &|_| None);
    options.connect_timeout = Duration::from_secs(120);
    options.elicitor = elicitor;
    let clients = McpClients::start(vec![spec], options).await;
    assert!(
        clients.diagnostics().is_empty(),
        "{:?}",
        clients.diagnostics()
    );
    clients
}

/// Calls the server's Bash with `command`; the output, whether it is an
/// error, and the progress reports.
async fn bash(clients: &McpClients, work: &Path, command: &str) -> (String, bool, Vec<Progress>) {
    let (tools, _) = clients.tools();
    let bash = tools.iter().find(|t| t.name() == "mcp__b__Bash").unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut ctx =
        ToolContext::standalone("t1", Context::new(work), Session::new("s", work.join("s")));
    ctx.cancel = CancelScope::new();
    ctx.progress = {
        let seen = Arc::clone(&seen);
        ProgressSink::new(move |p| seen.lock().unwrap().push(p))
    };
    let input = json!({"command": command});
    let out = bash.call(bash.parse(&input).unwrap(), ctx).await.unwrap();
    let text = baton::engine::content::joined_text(&out.content);
    let seen = seen.lock().unwrap().clone();
    (text, out.is_error, seen)
}

fn as_task(seen: &[Progress]) -> bool {
    seen.iter()
        .any(|p| p.data.as_ref().is_some_and(|d| d["taskId"].is_string()))
}

/// Baton's own MCP client declares the SEP-2663 extension; a call that
/// takes longer than the server's grace is answered with a task handle,
/// which the client follows to the result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batons_client_follows_a_slow_call_as_an_extension_task() {
    let (_dir, work) = workdir();
    let clients = baton_client_of(&work, settings(&work), None).await;
    let command = "echo begun >> count-ext; sleep 3; echo slow answer";
    let (text, is_error, seen) = bash(&clients, &work, command).await;
    assert!(!is_error && text.contains("slow answer"), "{text}");
    assert!(as_task(&seen), "followed as a task: {seen:?}");
    assert_eq!(runs(&work, "count-ext"), 1, "ran once");
    // A quick call is answered as before, without a task.
    let (text, _, seen) = bash(&clients, &work, "echo quick").await;
    assert!(text.contains("quick") && !as_task(&seen), "{text} {seen:?}");
    clients.shutdown().await;
}

/// A call that needs approval inside an extension task: the task asks
/// (`input_required`), Baton's client asks its host and answers with
/// `tasks/update`, the call runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_extension_task_asks_for_approval_and_goes_on() {
    let (_dir, work) = workdir();
    let only_echo = work.join("only-echo.json");
    std::fs::write(
        &only_echo,
        r#"{"permissions": {"allow": ["Bash(echo:*)"]}}"#,
    )
    .unwrap();
    let asked = Arc::new(Mutex::new(Vec::new()));
    let elicitor: Arc<dyn Elicitor> = {
        let asked = Arc::clone(&asked);
        Arc::new(FnElicitor(move |request: ElicitRequest| {
            asked.lock().unwrap().push(request.message.clone());
            async { ElicitResponse::Accept(json!({"allow": true})) }
        }))
    };
    let clients = baton_client_of(&work, only_echo.display().to_string(), Some(elicitor)).await;
    let command = "sleep 2; touch approved-file; echo done";
    let (text, is_error, seen) = bash(&clients, &work, command).await;
    assert!(!is_error && text.contains("done"), "{text}");
    assert!(work.join("approved-file").exists());
    assert!(as_task(&seen), "{seen:?}");
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(asked[0].contains("Allow Bash"), "{asked:?}");
    clients.shutdown().await;
}
