//! `baton mcp serve` guards its processes like `run` and `serve` do
//! (issue 25): SIGKILL of the server, over stdio or HTTP, with Bash calls
//! running leaves nothing running (PDEATHSIG plus the orphan sentinel), and
//! as PID 1 of a PID namespace it reaps every orphan the calls leave.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use baton_test_support::procs::sleeping;
use baton_test_support::worker::Worker;
use serde_json::{json, Value};

use crate::support::BATON;

/// A `sleep` argument no other test uses.
fn marker() -> String {
    baton_test_support::procs::marker("900.")
}

/// A command that leaves `sleep` running every way a shell can.
fn escaping(marker: &str) -> String {
    format!(
        "sleep {marker} & setsid sleep {marker} & (set -m; sleep {marker} &); nohup sleep {marker} >/dev/null 2>&1 & sleep {marker}"
    )
}

fn wait_for(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// Waits up to 10 s for the count to reach 0; returns what is left.
fn left_after_kill(marker: &str) -> usize {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(10) && sleeping(marker) > 0 {
        std::thread::sleep(Duration::from_millis(25));
    }
    sleeping(marker)
}

/// `baton mcp serve` over stdio, spoken to line by line.
struct Stdio_ {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<Value>,
}

impl Stdio_ {
    fn start(program: &str, args: &[&str]) -> Stdio_ {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Ok(v) = serde_json::from_str(&line) {
                    let _ = tx.send(v);
                }
            }
        });
        let mut s = Stdio_ {
            child,
            stdin,
            lines,
        };
        s.send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "guard-test", "version": "1"}}}),
        );
        s.answer(0);
        s.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        s
    }

    fn send(&mut self, v: Value) {
        writeln!(self.stdin, "{v}").unwrap();
        self.stdin.flush().unwrap();
    }

    fn call_bash(&mut self, id: u64, command: &str) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "Bash", "arguments": {"command": command}}}));
    }

    fn answer(&self, id: u64) -> Value {
        loop {
            let v = self
                .lines
                .recv_timeout(Duration::from_secs(60))
                .expect("no answer from mcp serve");
            if v["id"] == id {
                return v;
            }
        }
    }
}

impl Drop for Stdio_ {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn server_args(dir: &std::path::Path) -> Vec<String> {
    vec![
        "mcp".into(),
        "serve".into(),
        "--permission-mode".into(),
        "bypassPermissions".into(),
        "--cwd".into(),
        dir.display().to_string(),
        "--state-dir".into(),
        dir.join(".state").display().to_string(),
    ]
}

#[test]
fn sigkill_of_mcp_serve_over_stdio_leaves_no_process() {
    let dir = tempfile::tempdir().unwrap();
    let marker = marker();
    let args = server_args(dir.path());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut server = Stdio_::start(BATON, &args);
    server.call_bash(1, &escaping(&marker));
    server.call_bash(2, &escaping(&marker));
    wait_for("both calls' sleeps", Duration::from_secs(30), || {
        sleeping(&marker) >= 5
    });
    let _ = server.child.kill();
    let _ = server.child.wait();
    let left = left_after_kill(&marker);
    eprintln!("stdio: {left} sleeps left after SIGKILL");
    assert_eq!(left, 0, "processes outlived a SIGKILLed `mcp serve`");
}

/// One JSON-RPC request to the worker, as a curl command (headers and body
/// on stdout).
fn post(url: &str, token: &str, session: Option<&str>, body: &Value) -> Command {
    let mut cmd = Command::new("curl");
    cmd.args(["-s", "-D", "-", "-X", "POST", url])
        .args(["-H", "Content-Type: application/json"])
        .args(["-H", "Accept: application/json, text/event-stream"])
        .args(["-H", &format!("Authorization: Bearer {token}")])
        .args(["--data-binary", &body.to_string()]);
    if let Some(id) = session {
        cmd.args(["-H", &format!("Mcp-Session-Id: {id}")]);
    }
    cmd
}

/// An MCP session with the worker; its id.
fn http_session(url: &str, token: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "guard-test", "version": "1"}}});
    let out = post(url, token, None, &init).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let id = text
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_string())
        })
        .unwrap_or_else(|| panic!("no session id: {text}"));
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    post(url, token, Some(&id), &note).output().unwrap();
    id
}

#[test]
fn sigkill_of_mcp_serve_over_http_leaves_no_process() {
    let dir = tempfile::tempdir().unwrap();
    let marker = marker();
    let token = "guard-test-token";
    let mut worker = Worker::start(BATON, &dir.path().join("w"), token);
    let session = http_session(&worker.url, token);
    let mut clients = Vec::new();
    for id in 1..=2 {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "Bash", "arguments": {"command": escaping(&marker)}}});
        clients.push(
            post(&worker.url, token, Some(&session), &call)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        );
    }
    wait_for("both calls' sleeps", Duration::from_secs(30), || {
        sleeping(&marker) >= 5
    });
    worker.kill();
    let left = left_after_kill(&marker);
    for mut c in clients {
        let _ = c.kill();
        let _ = c.wait();
    }
    eprintln!("http: {left} sleeps left after SIGKILL");
    assert_eq!(left, 0, "processes outlived a SIGKILLed `mcp serve --http`");
}

/// Whether unprivileged PID namespaces work here.
fn namespaces_work() -> bool {
    Command::new("unshare")
        .args(["-fpr", "--mount-proc", "true"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The children of `pid` and their states.
fn children(pid: u32) -> Vec<(u32, char)> {
    let mut out = Vec::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return out;
    };
    for task in tasks.flatten() {
        let list = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
        for kid in list
            .split_whitespace()
            .filter_map(|p| p.parse::<u32>().ok())
        {
            let stat = std::fs::read_to_string(format!("/proc/{kid}/stat")).unwrap_or_default();
            let state = stat
                .rsplit(')')
                .next()
                .and_then(|s| s.split_whitespace().next())
                .and_then(|s| s.chars().next())
                .unwrap_or('?');
            out.push((kid, state));
        }
    }
    out
}

#[test]
fn as_pid_1_mcp_serve_reaps_every_orphan() {
    if !namespaces_work() {
        eprintln!("skipped: unprivileged `unshare -fpr --mount-proc` is not available here");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec!["-fpr".to_string(), "--mount-proc".into(), BATON.into()];
    args.extend(server_args(dir.path()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut server = Stdio_::start("unshare", &args);
    // Each call leaves an orphan that ends a moment after its shell.
    for id in 1..=20 {
        server.call_bash(id, "(sleep 0.2; true) & disown; echo started");
        let answer = server.answer(id);
        assert!(answer["result"].is_object(), "{answer}");
    }
    // unshare's only child is Baton, PID 1 of the namespace.
    let unshare = server.child.id();
    let baton = children(unshare)
        .first()
        .map(|(pid, _)| *pid)
        .expect("baton runs under unshare");
    std::thread::sleep(Duration::from_secs(2));
    let mut zombies = 0;
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        zombies = children(baton).iter().filter(|(_, s)| *s == 'Z').count();
        if zombies == 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    eprintln!("PID 1: {zombies} zombies after 20 calls");
    assert_eq!(zombies, 0, "PID 1 left zombies");
}
