//! The engine owns its MCP servers: a tool list that changes at run time is
//! picked up between messages (Rust API and `baton serve`), and the servers
//! stop with the engine — `Engine::shutdown`, and `baton serve` ended by
//! SIGTERM (once: orderly; twice: killed at once).

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use baton::engine::pool::{PoolSpec, ToolPool};
use baton::mcp::{ClientOptions, McpClients, ServerSpec};
use baton::{Engine, Event, ToolUse};
use baton_test_support::{mcp_servers, procs};
use serde_json::{json, Value};

fn script() -> PathBuf {
    mcp_servers::script("misbehaving.py")
}

fn gone(pid: i32) -> bool {
    !procs::alive(pid)
}

fn wait_gone(pid: i32, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if gone(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    gone(pid)
}

async fn one_call(engine: &Engine, name: &str) -> (bool, String) {
    let mut batch = engine.open_batch().await.unwrap();
    batch.add(ToolUse::new("t1", name, json!({}))).unwrap();
    batch.end();
    let mut out = None;
    while let Some(event) = batch.next_event().await {
        match event {
            Event::Result { result, .. } => out = Some(result),
            Event::Done(_) => break,
            _ => {}
        }
    }
    let result = out.expect("a result");
    let text = baton::engine::content::joined_text(&result.content);
    (result.is_error, text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn engine_refreshes_tools_between_messages_and_stops_its_servers() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = ClientOptions::from_env(dir.path(), &|_| None);
    opts.connect_timeout = Duration::from_secs(120);
    let spec = ServerSpec::stdio("py", "python3", vec![script().display().to_string()]);
    let clients = Arc::new(McpClients::start(vec![spec], opts).await);
    assert!(
        clients.diagnostics().is_empty(),
        "{:?}",
        clients.diagnostics()
    );
    let pid = clients.servers()[0].pid().unwrap();
    let (others, _) = clients.tools();
    let pool = ToolPool::assemble(
        PoolSpec {
            builtins: baton::BuiltinConfig::default().tools().unwrap(),
            others,
            ..Default::default()
        },
        &baton::engine::permission::AllowAllUnsafe,
    );
    let engine = Engine::builder(pool)
        .cwd(dir.path())
        .state_dir(dir.path().join("state"))
        .allow_all_unsafe()
        .mcp(Arc::clone(&clients))
        .build()
        .unwrap();
    assert!(
        engine.refresh_tools().await.is_none(),
        "nothing changed yet"
    );
    let (err, text) = one_call(&engine, "mcp__py__add_tool").await;
    assert!(!err, "{text}");
    // The notification arrived with (or just before) the result; the host
    // refreshes between messages.
    let deadline = Instant::now() + Duration::from_secs(10);
    while engine.refresh_tools().await.is_none() {
        assert!(Instant::now() < deadline, "no tools/list_changed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let names = engine.pool().names();
    assert!(names.iter().any(|n| n == "mcp__py__added"), "{names:?}");
    // SPEC §3 order still holds: built-ins first, then the rest sorted.
    let first_mcp = names.iter().position(|n| n.starts_with("mcp__")).unwrap();
    assert!(names[..first_mcp].iter().any(|n| n == "Bash"));
    let mut rest = names[first_mcp..].to_vec();
    rest.retain(|n| n.starts_with("mcp__"));
    let mut sorted = rest.clone();
    sorted.sort();
    assert_eq!(rest, sorted);
    let (err, text) = one_call(&engine, "mcp__py__added").await;
    assert!(!err && text == "added works", "{text}");

    // The engine's shutdown stops the server; the host never calls
    // McpClients::shutdown.
    assert!(!gone(pid));
    engine.shutdown();
    assert!(wait_gone(pid, Duration::from_secs(10)), "server {pid} left");
}

/// `RefreshMcpTools` through the engine: a server that changes its tools
/// without announcing it is re-listed by the model's call, and the pool
/// follows between messages (the path of `tools/list_changed`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refresh_mcp_tools_updates_the_pool_between_messages() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = ClientOptions::from_env(dir.path(), &|_| None);
    opts.connect_timeout = Duration::from_secs(120);
    let quiet = mcp_servers::script("oversized.py");
    let spec = ServerSpec::stdio("q", "python3", vec![quiet.display().to_string()]);
    let clients = Arc::new(McpClients::start(vec![spec], opts).await);
    let (others, _) = clients.tools();
    let pool = ToolPool::assemble(
        PoolSpec {
            others,
            ..Default::default()
        },
        &baton::engine::permission::AllowAllUnsafe,
    );
    let engine = Engine::builder(pool)
        .cwd(dir.path())
        .state_dir(dir.path().join("state"))
        .allow_all_unsafe()
        .mcp(Arc::clone(&clients))
        .build()
        .unwrap();
    let (err, text) = one_call(&engine, "mcp__q__toggle").await;
    assert!(!err, "{text}");
    assert!(
        engine.refresh_tools().await.is_none(),
        "the server said nothing"
    );
    let (err, text) = one_call(&engine, "RefreshMcpTools").await;
    assert!(!err, "{text}");
    let report: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(report[0]["added"], json!(["mcp__q__extra"]), "{report}");
    assert_eq!(report[0]["removed"], json!(["mcp__q__gone"]), "{report}");
    assert!(engine.refresh_tools().await.is_some());
    let names = engine.pool().names();
    assert!(
        names.iter().any(|n| n == "mcp__q__extra") && !names.iter().any(|n| n == "mcp__q__gone"),
        "{names:?}"
    );
    let (err, text) = one_call(&engine, "mcp__q__extra").await;
    assert!(!err && text == "extra works", "{text}");
    engine.shutdown();
    engine.stop_mcp_servers().await;
}

/// `baton serve` with the Python server: returns the child, its stdin, a
/// reader of its stdout lines and the server's pid.
struct Serve {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: std::sync::mpsc::Receiver<Value>,
    _dir: tempfile::TempDir,
}

impl Serve {
    fn start() -> Serve {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("mcp.json");
        let servers = json!({"mcpServers": {"py": {"command": "python3", "args": [script()]}}});
        std::fs::write(&config, servers.to_string()).unwrap();
        let settings = dir.path().join("s.json");
        std::fs::write(&settings, r#"{"permissions":{"allow":["mcp__py"]}}"#).unwrap();
        let mut child = crate::support::baton()
            .env("HOME", dir.path())
            .env("MCP_TIMEOUT", "120000")
            .args(["serve", "--strict-mcp-config", "--mcp-config"])
            .arg(&config)
            .arg("--settings")
            .arg(&settings)
            .arg("--cwd")
            .arg(dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(v) = serde_json::from_str::<Value>(&line) {
                    if tx.send(v).is_err() {
                        break;
                    }
                }
            }
        });
        Serve {
            child,
            stdin,
            lines,
            _dir: dir,
        }
    }

    /// Sends one message with one call and returns the text of its result.
    fn call(&mut self, id: &str, name: &str) -> String {
        let msg = json!({"type": "message", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": id, "name": name, "input": {}}]}});
        writeln!(self.stdin, "{msg}").unwrap();
        self.stdin.flush().unwrap();
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.lines.recv_timeout(left).expect("serve answered");
            if line["type"] == "done" || line["type"] == "message" || line.get("content").is_some()
            {
                let text = line.to_string();
                if text.contains(id) {
                    return text;
                }
            }
        }
    }

    fn send(&mut self, line: Value) {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
    }

    fn send_call(&mut self, id: &str, name: &str) {
        self.send(
            json!({"type": "message", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": id, "name": name, "input": {}}]}}),
        );
    }

    /// The next line `pred` accepts (earlier ones are skipped).
    fn next_where(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.lines.recv_timeout(left).expect("serve answered");
            if pred(&line) {
                return line;
            }
        }
    }

    fn pid_of_server(&mut self) -> i32 {
        let text = self.call("w1", "mcp__py__whoami");
        text.split("pid=")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no pid in {text}"))
    }

    fn signal(&self, sig: &str) {
        let status = Command::new("kill")
            .args([sig, &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    fn wait_exit(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "baton serve did not exit");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

#[test]
fn serve_picks_up_a_changed_tool_list_between_messages() {
    let mut serve = Serve::start();
    let text = serve.call("a1", "mcp__py__add_tool");
    assert!(text.contains("added"), "{text}");
    // The next message sees the new tool (the notification may trail the
    // result by a moment; a message sent before it arrived gets "no such
    // tool", one after it the tool).
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut n = 0;
    loop {
        n += 1;
        let text = serve.call(&format!("b{n}"), "mcp__py__added");
        if text.contains("added works") {
            break;
        }
        assert!(Instant::now() < deadline, "never offered: {text}");
        std::thread::sleep(Duration::from_millis(100));
    }
    let pid = serve.pid_of_server();
    drop(serve.stdin);
    let mut child = serve.child;
    let _ = child.wait();
    assert!(wait_gone(pid, Duration::from_secs(10)), "server {pid} left");
}

#[test]
fn sigterm_to_serve_stops_the_mcp_servers() {
    // One SIGTERM: the orderly path (SIGTERM, grace, SIGKILL to the group).
    let mut serve = Serve::start();
    let pid = serve.pid_of_server();
    serve.signal("-TERM");
    serve.wait_exit();
    assert!(
        wait_gone(pid, Duration::from_secs(5)),
        "server {pid} left after SIGTERM"
    );

    // Two: Baton kills every tagged tree at once and exits.
    let mut serve = Serve::start();
    let pid = serve.pid_of_server();
    serve.signal("-TERM");
    serve.signal("-TERM");
    serve.wait_exit();
    assert!(
        wait_gone(pid, Duration::from_secs(5)),
        "server {pid} left after two SIGTERMs"
    );
}

#[test]
fn serve_turns_elicitation_into_a_host_question() {
    let mut serve = Serve::start();
    let ask = |serve: &mut Serve, id: &str| -> u64 {
        serve.send_call(id, "mcp__py__ask");
        let q = serve.next_where(|l| l["type"] == "elicitation_request");
        assert_eq!(q["server"], "py");
        assert_eq!(q["message"], "What is your name?");
        assert_eq!(q["mode"], "form");
        assert!(
            q["requested_schema"]["properties"]["name"].is_object(),
            "{q}"
        );
        q["request_id"].as_u64().unwrap()
    };
    let done = |serve: &mut Serve, id: &str| -> String {
        let id = id.to_string();
        serve
            .next_where(move |l| l["type"] == "done" && l.to_string().contains(&id))
            .to_string()
    };

    // Accepted with content.
    let rid = ask(&mut serve, "e1");
    serve.send(
        json!({"type": "elicitation", "request_id": rid, "action": "accept",
        "content": {"name": "Ada"}}),
    );
    assert!(done(&mut serve, "e1").contains("hello Ada"));

    // A bad answer is an error line and the question stays open; then declined.
    let rid = ask(&mut serve, "e2");
    serve.send(json!({"type": "elicitation", "request_id": rid, "action": "maybe"}));
    let err = serve.next_where(|l| l["type"] == "error");
    assert!(err["message"].as_str().unwrap().contains("accept"), "{err}");
    serve.send(json!({"type": "elicitation", "request_id": rid, "action": "decline"}));
    assert!(done(&mut serve, "e2").contains("elicitation decline"));

    // Nobody left to answer (end of input): declined, and serve ends.
    let _ = ask(&mut serve, "e3");
    let Serve {
        stdin,
        mut child,
        lines,
        ..
    } = serve;
    drop(stdin);
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut answered = false;
    while let Ok(line) = lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        if line["type"] == "done" && line.to_string().contains("elicitation decline") {
            answered = true;
        }
    }
    assert!(
        answered,
        "the pending elicitation was not declined at end of input"
    );
    let _ = child.wait();
}

/// Builds an engine over the Python server whose settings carry `hooks`.
async fn engine_with_hooks(dir: &Path, hooks: Value) -> (Engine, Arc<McpClients>) {
    std::fs::create_dir_all(dir.join(".claude")).unwrap();
    std::fs::write(
        dir.join(".claude/settings.json"),
        json!({"hooks": hooks}).to_string(),
    )
    .unwrap();
    let settings = baton::engine::settings::Settings::load(dir, None).unwrap();
    let mut opts = ClientOptions::from_env(dir, &|_| None);
    opts.connect_timeout = Duration::from_secs(120);
    let spec = ServerSpec::stdio("py", "python3", vec![script().display().to_string()]);
    let clients = Arc::new(McpClients::start(vec![spec], opts).await);
    let (others, _) = clients.tools();
    let pool = ToolPool::assemble(
        PoolSpec {
            others,
            ..Default::default()
        },
        &baton::engine::permission::AllowAllUnsafe,
    );
    let engine = Engine::builder(pool)
        .cwd(dir)
        .state_dir(dir.join("state"))
        .allow_all_unsafe()
        .hooks(settings.hooks.clone())
        .mcp(Arc::clone(&clients))
        .build()
        .unwrap();
    (engine, clients)
}

fn command_hook(record: &Path, answer: Value) -> Value {
    json!([{"hooks": [{"type": "command", "command": format!(
        "cat >> {} && echo >> {} && echo '{}'",
        record.display(),
        record.display(),
        answer
    )}]}])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn elicitation_hooks_answer_and_override() {
    // An Elicitation hook answers for the user (no host at all).
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("elicitation.jsonl");
    let answer = json!({"hookSpecificOutput": {"hookEventName": "Elicitation",
        "action": "accept", "content": {"name": "Hook"}}});
    let mut hooks = json!({"Elicitation": command_hook(&record, answer)});
    hooks["Elicitation"][0]["matcher"] = json!("py");
    let (engine, _clients) = engine_with_hooks(dir.path(), hooks).await;
    let (err, text) = one_call(&engine, "mcp__py__ask").await;
    assert!(!err && text == "hello Hook", "{text}");
    let seen: Value = serde_json::from_str(
        std::fs::read_to_string(&record)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(seen["hook_event_name"], "Elicitation");
    assert_eq!(seen["mcp_server_name"], "py");
    assert_eq!(seen["message"], "What is your name?");
    assert_eq!(seen["mode"], "form");
    assert!(
        seen["requested_schema"]["properties"]["name"].is_object(),
        "{seen}"
    );
    engine.shutdown();
    engine.stop_mcp_servers().await;

    // A matcher for another server does not fire; with no host the answer
    // is decline, and an ElicitationResult hook may override it.
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("result.jsonl");
    let answer = json!({"hookSpecificOutput": {"hookEventName": "ElicitationResult",
        "action": "accept", "content": {"name": "Late"}}});
    let other = dir.path().join("other.jsonl");
    let mut hooks = json!({
        "Elicitation": command_hook(&other, json!({"hookSpecificOutput": {
            "hookEventName": "Elicitation", "action": "accept", "content": {"name": "Wrong"}}})),
        "ElicitationResult": command_hook(&record, answer),
    });
    hooks["Elicitation"][0]["matcher"] = json!("some-other-server");
    let (engine, _clients) = engine_with_hooks(dir.path(), hooks).await;
    let (err, text) = one_call(&engine, "mcp__py__ask").await;
    assert!(!err && text == "hello Late", "{text}");
    assert!(!other.exists(), "a hook for another server fired");
    let seen: Value = serde_json::from_str(
        std::fs::read_to_string(&record)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(seen["hook_event_name"], "ElicitationResult");
    assert_eq!(seen["action"], "decline");
    assert_eq!(seen["mcp_server_name"], "py");
    engine.shutdown();
    engine.stop_mcp_servers().await;
}
