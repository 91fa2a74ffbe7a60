//! Remote servers over real HTTP on 127.0.0.1, served by the official Python
//! SDK (mcp 2.3.0): the legacy HTTP+SSE transport (`"type": "sse"`), and a
//! remote server (SSE or streamable HTTP) that dies and comes back.

use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use baton_engine::{CancelReason, CancelScope, ProgressSink};
use baton_mcp::{parse_servers, Scope, ServerSpec};
use common::*;
use parking_lot::Mutex;
use serde_json::json;

use crate::common;

/// The Python test server on a remote transport, in its own process group.
struct Remote {
    child: std::process::Child,
    port: u16,
    mode: &'static str,
}

impl Remote {
    /// `mode` is `--sse` or `--http`; the server picks a free port itself.
    fn start(mode: &'static str) -> Remote {
        Remote::on(mode, 0)
    }

    /// Waits for the server's `listening on PORT` line, printed once its
    /// socket listens. Probing the port instead could be answered by
    /// another test's server or by the probe itself (a TCP self-connect),
    /// and a port found free and released could be taken before the
    /// server binds it.
    fn on(mode: &'static str, port: u16) -> Remote {
        use std::io::BufRead;
        use std::os::unix::process::CommandExt;
        let script = workspace().join("tools/mcp/tests/servers/misbehaving.py");
        let mut child = std::process::Command::new("python3")
            .arg("-u")
            .arg(script)
            .args([mode, &port.to_string()])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = std::io::BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let mut remote = Remote { child, port, mode };
        let line = rx.recv_timeout(Duration::from_secs(60)).unwrap_or_default();
        match line.trim().strip_prefix("listening on ").map(str::parse) {
            Some(Ok(port)) => remote.port = port,
            _ => panic!("the {mode} server did not start (it printed {line:?})"),
        }
        remote
    }

    fn url(&self) -> String {
        match self.mode {
            "--sse" => format!("http://127.0.0.1:{}/sse", self.port),
            _ => format!("http://127.0.0.1:{}/mcp", self.port),
        }
    }

    fn kill(&mut self) {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::killpg(pid, nix::sys::signal::Signal::SIGKILL);
        let _ = self.child.wait();
    }
}

impl Drop for Remote {
    fn drop(&mut self) {
        self.kill();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_sse_server_works_like_any_other() {
    let server = Remote::start("--sse");
    let dir = tempfile::tempdir().unwrap();
    // Configured as a user has it, with a header from the environment.
    let config = json!({"legacy": {"type": "sse", "url": server.url(),
        "headers": {"X-Token": "Bearer ${SSE_TOKEN}", "X-Default": "${UNSET_VAR:-fallback}"}}});
    let env = |name: &str| (name == "SSE_TOKEN").then(|| "s3cret".to_string());
    let (specs, problems) = parse_servers(&config, Scope::Flag, "test", &env);
    assert!(problems.is_empty(), "{problems:?}");
    let clients = start(specs, dir.path()).await;
    assert!(
        clients.diagnostics().is_empty(),
        "{:?}",
        clients.diagnostics()
    );
    let status = &clients.statuses()[0];
    assert_eq!(status.transport, "sse");
    assert_eq!(status.state.label(), "ready");
    assert!(
        status
            .protocol
            .as_deref()
            .is_some_and(|p| p.starts_with("20")),
        "{:?}",
        status.protocol
    );
    assert!(status.tools.iter().any(|t| t == "mcp__legacy__echo"));

    let (tools, _) = clients.tools();
    let out = call(
        &tools,
        "mcp__legacy__echo",
        json!({"text": "over sse"}),
        dir.path(),
    )
    .await
    .unwrap();
    assert_eq!(text(&out), "over sse");
    // Headers, expanded, go with every POST.
    for (name, want) in [("X-Token", "Bearer s3cret"), ("X-Default", "fallback")] {
        let out = call(
            &tools,
            "mcp__legacy__header",
            json!({"name": name}),
            dir.path(),
        )
        .await
        .unwrap();
        assert_eq!(text(&out), want);
    }

    // Parallel calls are not serialised: 16 × 600 ms (9.6 s one by one).
    let slow = find(&tools, "mcp__legacy__slow_read");
    let started = Instant::now();
    let calls = (0..16).map(|_| call_with(&slow, json!({"ms": 600}), ctx(dir.path())));
    for r in futures::future::join_all(calls).await {
        assert_eq!(text(&r.unwrap()), "slept 600 ms");
    }
    assert!(
        started.elapsed() < Duration::from_secs(6),
        "16 parallel 600 ms calls took {:?}",
        started.elapsed()
    );

    // Progress arrives on the stream and becomes progress events.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = {
        let seen = Arc::clone(&seen);
        ProgressSink::new(move |p| seen.lock().push(p.message))
    };
    let out = call_with(
        &find(&tools, "mcp__legacy__progress"),
        json!({"steps": 3, "delay_ms": 50}),
        ctx_with(dir.path(), CancelScope::new(), sink),
    )
    .await
    .unwrap();
    assert_eq!(text(&out), "done after 3 steps");
    // The last notification may race the result; the ones before it cannot.
    let seen = seen.lock().clone();
    assert!(seen.len() >= 2, "{seen:?}");
    assert_eq!(seen[..2], ["step 1 of 3", "step 2 of 3"]);

    // A cancelled call leaves the session usable.
    let cancel = CancelScope::new();
    let hang_tool = find(&tools, "mcp__legacy__hang");
    let hang = call_with(
        &hang_tool,
        json!({}),
        ctx_with(dir.path(), cancel.clone(), ProgressSink::discard()),
    );
    let canceller = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel.cancel(CancelReason::User);
    };
    let (hung, ()) = tokio::join!(hang, canceller);
    assert!(hung.is_err() || hung.as_ref().unwrap().is_error, "{hung:?}");
    let out = call(
        &tools,
        "mcp__legacy__echo",
        json!({"text": "still here"}),
        dir.path(),
    )
    .await
    .unwrap();
    assert_eq!(text(&out), "still here");

    // Elicitation without a host: declined, and the result says so.
    let out = call(&tools, "mcp__legacy__ask", json!({}), dir.path())
        .await
        .unwrap();
    assert!(text(&out).contains("decline"), "{}", text(&out));
    clients.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sse_configuration_errors_are_clear() {
    let dir = tempfile::tempdir().unwrap();
    // An unset variable in a header is an error for that server only.
    let config = json!({
        "bad": {"type": "sse", "url": "http://127.0.0.1:1/sse", "headers": {"A": "${NOPE_UNSET}"}},
    });
    let (specs, problems) = parse_servers(&config, Scope::Flag, "test", &|_| None);
    assert!(specs.is_empty());
    assert!(problems.join("\n").contains("NOPE_UNSET"), "{problems:?}");

    // A streamable-HTTP server configured as SSE: the error says what to do.
    // Nothing listens on port 1 (a port found free and released could be
    // taken by another test's server before the client tries it).
    let http = Remote::start("--http");
    let specs = vec![
        ServerSpec::sse("wrong", http.url()),
        ServerSpec::sse("down", "http://127.0.0.1:1/sse".to_string()),
        ServerSpec::http("down-http", "http://127.0.0.1:1/mcp".to_string()),
    ];
    let clients = start(specs, dir.path()).await;
    let diags = clients.diagnostics().join("\n");
    assert!(
        diags.contains("\"wrong\"") && diags.contains("\"type\": \"http\""),
        "{diags}"
    );
    assert!(
        diags.contains("\"down\"") && diags.contains("could not connect"),
        "{diags}"
    );
    // Over streamable HTTP too, and as a sentence with its cause, not
    // rmcp's dump of the transport's Rust type.
    let down_http = diags
        .lines()
        .find(|l| l.contains("\"down-http\""))
        .unwrap_or_default();
    assert!(
        down_http.contains("could not connect") && down_http.contains("refused"),
        "{diags}"
    );
    assert!(
        !diags.contains("rmcp::") && !diags.contains("Transport ["),
        "{diags}"
    );
    clients.shutdown().await;
}

/// A remote server that dies is reconnected: the supervisor notices the
/// closed connection and connects again (backoff 1, 2, 4, ... s), and the
/// next call succeeds once the server is back.
async fn remote_server_comes_back(mode: &'static str) {
    let mut server = Remote::start(mode);
    let port = server.port;
    let dir = tempfile::tempdir().unwrap();
    let spec = match mode {
        "--sse" => ServerSpec::sse("r", server.url()),
        _ => ServerSpec::http("r", server.url()),
    };
    let clients = start(vec![spec], dir.path()).await;
    assert!(
        clients.diagnostics().is_empty(),
        "{:?}",
        clients.diagnostics()
    );
    let (tools, _) = clients.tools();
    let first = call(&tools, "mcp__r__whoami", json!({}), dir.path())
        .await
        .unwrap();
    server.kill();
    // A call made while it is down either waits for the reconnect or fails
    // with an error naming the server; it never hangs.
    let down = tokio::spawn({
        let echo = find(&tools, "mcp__r__echo");
        let ctx = ctx(dir.path());
        async move { call_with(&echo, json!({"text": "x"}), ctx).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let _server = Remote::on(mode, port);
    match tokio::time::timeout(Duration::from_secs(60), down).await {
        Ok(Ok(Ok(out))) => assert!(
            text(&out) == "x" || (out.is_error && text(&out).contains("\"r\"")),
            "{out:?}"
        ),
        Ok(Ok(Err(e))) => assert!(e.message.contains("\"r\""), "{e:?}"),
        other => panic!("the call made while the server was down hung: {other:?}"),
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    let second = loop {
        match call(&tools, "mcp__r__whoami", json!({}), dir.path()).await {
            Ok(out) if !out.is_error => break text(&out),
            other => {
                assert!(Instant::now() < deadline, "never reconnected: {other:?}");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    };
    assert_ne!(text(&first), second, "a new server process answers");
    assert_eq!(clients.statuses()[0].state.label(), "ready");
    clients.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sse_server_that_dies_and_comes_back_is_reconnected() {
    remote_server_comes_back("--sse").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_server_that_dies_and_comes_back_is_reconnected() {
    remote_server_comes_back("--http").await;
}

/// `headersHelper` (Claude Code's): its printed headers go with every
/// request over both remote transports, over the entry's own; it learns
/// the server's name; what it leaves running is ended; and a helper that
/// fails keeps the server out with its message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headers_helper_supplies_the_connections_headers() {
    let marker = format!("helper-left-{}", std::process::id());
    for mode in ["--http", "--sse"] {
        let server = Remote::start(mode);
        let dir = tempfile::tempdir().unwrap();
        let helper = format!(
            "bash -c 'exec -a {marker} sleep 300' & echo $! > \"$CLAUDE_PROJECT_DIR/helper.pid\"; printf '{{\"X-Token\": \"Bearer for-%s\"}}' \"$CLAUDE_CODE_MCP_SERVER_NAME\""
        );
        let kind = if mode == "--sse" { "sse" } else { "http" };
        let config = json!({
            "deals": {"type": kind, "url": server.url(), "headersHelper": helper,
                      "headers": {"x-token": "static", "X-Default": "kept"}},
            "broken": {"type": kind, "url": server.url(),
                       "headersHelper": "echo token service down >&2; exit 7"}
        });
        let (specs, problems) = parse_servers(&config, Scope::Flag, "test", &|_| None);
        assert!(problems.is_empty(), "{problems:?}");
        let clients = start(specs, dir.path()).await;
        let (tools, _) = clients.tools();
        let diagnostics = clients.diagnostics().join("\n");
        assert!(
            tools.iter().any(|t| t.name() == "mcp__deals__header"),
            "{mode}: deals did not connect: {diagnostics}"
        );
        for (name, want) in [("X-Token", "Bearer for-deals"), ("X-Default", "kept")] {
            let out = call(
                &tools,
                "mcp__deals__header",
                json!({"name": name}),
                dir.path(),
            )
            .await
            .unwrap();
            assert_eq!(text(&out), want, "{mode}");
        }
        assert!(
            diagnostics.contains("token service down"),
            "{mode}: {diagnostics}"
        );
        assert!(!tools.iter().any(|t| t.name().starts_with("mcp__broken")));
        // The helper did start its child (or the count below proves nothing).
        let pid = std::fs::read_to_string(dir.path().join("helper.pid")).unwrap_or_default();
        assert!(
            pid.trim().parse::<u32>().is_ok(),
            "{mode}: no child: {pid:?}"
        );
        let left = std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
            .filter(|c| String::from_utf8_lossy(c).contains(&marker))
            .count();
        assert_eq!(left, 0, "{mode}: the helper's child was left running");
    }
}
