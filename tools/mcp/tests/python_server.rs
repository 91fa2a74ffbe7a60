//! Against a real server written with the official Python SDK (mcp 2.3.0):
//! parallel calls, timeouts, cancellation, progress, crashes and restarts,
//! junk on stdout, huge output, elicitation, list_changed.

use std::sync::Arc;
use std::time::{Duration, Instant};

use baton_engine::{CancelReason, CancelScope, ProgressSink};
use baton_mcp::{CallLimits, ElicitResponse, FnElicitor, McpClients, ServerState};
use common::*;
use parking_lot::Mutex;
use serde_json::json;

use crate::common;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_are_named_hinted_and_described() {
    let dir = tempfile::tempdir().unwrap();
    let clients = start(vec![python_server(&[])], dir.path()).await;
    assert!(
        clients.diagnostics().is_empty(),
        "{:?}",
        clients.diagnostics()
    );
    let (tools, problems) = clients.tools();
    assert!(problems.is_empty(), "{problems:?}");
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    assert!(names.contains(&"mcp__py__slow_read"), "{names:?}");
    assert!(names.contains(&"ListMcpResourcesTool") && names.contains(&"ReadMcpResourceTool"));
    let read = find(&tools, "mcp__py__slow_read");
    let parsed = read.parse(&json!({"ms": 1})).unwrap();
    assert!(read.is_concurrency_safe(&parsed) && read.is_read_only(&parsed));
    assert!(
        read.def().is_deferred(),
        "MCP tools are deferred unless alwaysLoad"
    );
    let write = find(&tools, "mcp__py__slow_write");
    let parsed = write.parse(&json!({"ms": 1})).unwrap();
    assert!(!write.is_concurrency_safe(&parsed) && !write.is_read_only(&parsed));
    assert!(
        write.is_destructive(&parsed),
        "no hints: MCP's cautious defaults"
    );
    let long = find(&tools, "mcp__py__long_description");
    assert!(long.def().description().chars().count() < 2_100);
    assert!(long.def().description().contains("cut at 2048"));
    let allowed = find(&tools, "mcp__py__huge_allowed");
    assert_eq!(allowed.def().max_result_chars(), Some(300_000));
    assert_eq!(read.def().max_result_chars(), Some(100_000));
    let status = &clients.statuses()[0];
    assert_eq!(status.state, ServerState::Ready);
    assert_eq!(status.transport, "stdio");
    assert!(
        status
            .protocol
            .as_deref()
            .is_some_and(|p| p.starts_with("20")),
        "{:?}",
        status.protocol
    );
    clients.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thirty_two_parallel_read_only_calls_run_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let clients = start(vec![python_server(&[])], dir.path()).await;
    let (tools, _) = clients.tools();
    let tool = find(&tools, "mcp__py__slow_read");
    // Warm up (the first call pays for imports on the server side).
    call(&tools, "mcp__py__slow_read", json!({"ms": 1}), dir.path())
        .await
        .unwrap();
    let started = Instant::now();
    let calls = (0..32).map(|_| call_with(&tool, json!({"ms": 200}), ctx(dir.path())));
    let results = futures::future::join_all(calls).await;
    let took = started.elapsed();
    for r in &results {
        assert_eq!(text(r.as_ref().unwrap()), "slept 200 ms");
    }
    // Serialised, 32 × 200 ms would take 6.4 s; the bound is generous for
    // a loaded machine (the bench measures the real figure).
    assert!(took < Duration::from_millis(3_000), "took {took:?}");
    clients.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_sends_notification_and_the_connection_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("cancelled.txt");
    let mut spec = python_server(&[]);
    if let baton_mcp::TransportSpec::Stdio { env, .. } = &mut spec.transport {
        env.insert("CANCEL_MARKER".into(), marker.display().to_string());
    }
    let clients = start(vec![spec], dir.path()).await;
    let (tools, _) = clients.tools();
    let pid = clients.servers()[0].pid().unwrap();
    let scope = CancelScope::new();
    let hang = find(&tools, "mcp__py__hang");
    let running = tokio::spawn({
        let ctx = ctx_with(dir.path(), scope.clone(), ProgressSink::discard());
        async move { call_with(&hang, json!({}), ctx).await }
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    scope.cancel(CancelReason::User);
    let out = tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(out.is_error);
    assert!(
        text(&out).contains("cancelled") && text(&out).contains("connection stays open"),
        "{}",
        text(&out)
    );
    // The server saw notifications/cancelled for that request...
    let deadline = Instant::now() + Duration::from_secs(10);
    while !marker.exists() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(marker.exists(), "the server never saw the cancellation");
    // ...and the same connection (same process) serves the next call.
    let out = call(
        &tools,
        "mcp__py__echo",
        json!({"text": "still here"}),
        dir.path(),
    )
    .await
    .unwrap();
    assert_eq!(text(&out), "still here");
    assert_eq!(clients.servers()[0].pid(), Some(pid));
    clients.shutdown().await;
    assert!(!alive(pid), "server process left after shutdown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_limit_resets_on_progress_and_total_limit_holds() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = options(dir.path());
    opts.limits = CallLimits {
        idle: Duration::from_millis(2_000),
        total: Duration::from_secs(60),
    };
    let clients = McpClients::start(vec![python_server(&[])], opts.clone()).await;
    let (tools, _) = clients.tools();
    // Silent for 2 s: the idle limit ends it and says so.
    let out = call(
        &tools,
        "mcp__py__slow_write",
        json!({"ms": 2000}),
        dir.path(),
    )
    .await
    .unwrap();
    assert!(out.is_error);
    assert!(text(&out).contains("idle limit"), "{}", text(&out));
    // 10 × 300 ms = 3 s in all, but progress every 300 ms keeps it alive.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = {
        let seen = Arc::clone(&seen);
        ProgressSink::new(move |p| seen.lock().push(p.message))
    };
    let ctx = ctx_with(dir.path(), CancelScope::new(), sink);
    let out = call_with(
        &find(&tools, "mcp__py__progress"),
        json!({"steps": 10, "delay_ms": 300}),
        ctx,
    )
    .await
    .unwrap();
    assert_eq!(text(&out), "done after 10 steps", "{out:?}");
    // The last notification may race the result; the ones before it cannot.
    let seen = seen.lock().clone();
    assert!((9..=10).contains(&seen.len()), "{seen:?}");
    assert_eq!(seen[8], "step 9 of 10");
    clients.shutdown().await;

    // A server "timeout" is a hard total limit, progress or not.
    let mut spec = python_server(&[]);
    spec.timeout = Some(Duration::from_millis(2_500));
    let clients = McpClients::start(vec![spec], opts).await;
    let (tools, _) = clients.tools();
    let out = call(
        &tools,
        "mcp__py__progress",
        json!({"steps": 10, "delay_ms": 300}),
        dir.path(),
    )
    .await
    .unwrap();
    assert!(out.is_error);
    let t = text(&out);
    assert!(
        t.contains("total limit") && t.contains("last progress report"),
        "{t}"
    );
    // The connection survives the timeout.
    let out = call(
        &tools,
        "mcp__py__echo",
        json!({"text": "after"}),
        dir.path(),
    )
    .await
    .unwrap();
    assert_eq!(text(&out), "after");
    clients.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crashed_server_is_restarted_and_the_next_call_succeeds() {
    let dir = tempfile::tempdir().unwrap();
    let clients = start(vec![python_server(&[])], dir.path()).await;
    let (tools, _) = clients.tools();
    let first = clients.servers()[0].pid().unwrap();
    let err = call(&tools, "mcp__py__crash", json!({}), dir.path())
        .await
        .unwrap_err();
    assert!(
        err.message.contains("stopped while running mcp__py__crash"),
        "{}",
        err.message
    );
    assert!(
        err.message.contains("fatal: crash requested"),
        "stderr tail missing: {}",
        err.message
    );
    // The next call waits for the restart (first backoff: 1 s) and succeeds.
    let out = call(&tools, "mcp__py__whoami", json!({}), dir.path())
        .await
        .unwrap();
    let second = clients.servers()[0].pid().unwrap();
    assert_ne!(first, second);
    assert!(text(&out).contains(&format!("pid={second}")));
    assert!(!alive(first));
    clients.shutdown().await;
    assert!(!alive(second));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn junk_on_stdout_is_skipped_not_fatal() {
    let dir = tempfile::tempdir().unwrap();
    let clients = start(vec![python_server(&["--junk"])], dir.path()).await;
    assert!(
        clients.diagnostics().is_empty(),
        "{:?}",
        clients.diagnostics()
    );
    let (tools, _) = clients.tools();
    let out = call(&tools, "mcp__py__junk", json!({}), dir.path())
        .await
        .unwrap();
    assert_eq!(text(&out), "answered after junk");
    let server = &clients.servers()[0];
    assert!(
        server.junk_lines() >= 2,
        "junk lines: {} {:?}",
        server.junk_lines(),
        server.stderr_tail(20)
    );
    let tail = server.stderr_tail(20);
    assert!(
        tail.iter()
            .any(|l| l.contains("skipped] WARNING: debug mode")),
        "{tail:?}"
    );
    let out = call(&tools, "mcp__py__echo", json!({"text": "ok"}), dir.path())
        .await
        .unwrap();
    assert_eq!(text(&out), "ok");
    clients.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_errors_huge_output_env_and_resources() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = python_server(&[]);
    if let baton_mcp::TransportSpec::Stdio { env, .. } = &mut spec.transport {
        env.insert("FROM_CONFIG".into(), "yes".into());
    }
    let clients = start(vec![spec], dir.path()).await;
    let (tools, _) = clients.tools();
    let out = call(&tools, "mcp__py__failing", json!({}), dir.path())
        .await
        .unwrap();
    assert!(out.is_error && text(&out).contains("failing"), "{out:?}");
    let out = call(
        &tools,
        "mcp__py__huge",
        json!({"chars": 1_000_000}),
        dir.path(),
    )
    .await
    .unwrap();
    assert_eq!(text(&out).len(), 1_000_000);
    let out = call(&tools, "mcp__py__whoami", json!({}), dir.path())
        .await
        .unwrap();
    let t = text(&out);
    let canonical = dir.path().display().to_string();
    assert!(
        t.contains(&format!("project={canonical}")) && t.contains("from_config=yes"),
        "{t}"
    );
    let out = call(&tools, "ListMcpResourcesTool", json!({}), dir.path())
        .await
        .unwrap();
    assert!(text(&out).contains("test://greeting"), "{}", text(&out));
    let out = call(
        &tools,
        "ReadMcpResourceTool",
        json!({"server": "py", "uri": "test://greeting"}),
        dir.path(),
    )
    .await
    .unwrap();
    assert!(
        text(&out).contains("hello from a resource"),
        "{}",
        text(&out)
    );
    let err = call(
        &tools,
        "ReadMcpResourceTool",
        json!({"server": "nope", "uri": "x"}),
        dir.path(),
    )
    .await
    .unwrap_err();
    assert!(err.message.contains("the servers are: py"));
    clients.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn elicitation_goes_to_the_host_or_is_declined() {
    let dir = tempfile::tempdir().unwrap();
    let clients = start(vec![python_server(&[])], dir.path()).await;
    let (tools, _) = clients.tools();
    let out = call(&tools, "mcp__py__ask", json!({}), dir.path())
        .await
        .unwrap();
    assert!(
        text(&out).contains("decline"),
        "no host: declined; got {}",
        text(&out)
    );
    clients.shutdown().await;

    let asked = Arc::new(Mutex::new(Vec::new()));
    let mut opts = options(dir.path());
    opts.elicitor = Some(Arc::new(FnElicitor({
        let asked = Arc::clone(&asked);
        move |req: baton_mcp::ElicitRequest| {
            asked.lock().push(req.message.clone());
            async move { ElicitResponse::Accept(json!({"name": "Ada"})) }
        }
    })));
    let clients = McpClients::start(vec![python_server(&[])], opts).await;
    let (tools, _) = clients.tools();
    let out = call(&tools, "mcp__py__ask", json!({}), dir.path())
        .await
        .unwrap();
    assert_eq!(text(&out), "hello Ada");
    assert_eq!(asked.lock().as_slice(), ["What is your name?"]);
    clients.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_list_changes_are_picked_up_on_refresh() {
    let dir = tempfile::tempdir().unwrap();
    let clients = start(vec![python_server(&[])], dir.path()).await;
    let (before, _) = clients.tools();
    assert!(!before.iter().any(|t| t.name() == "mcp__py__added"));
    call(&before, "mcp__py__add_tool", json!({}), dir.path())
        .await
        .unwrap();
    // The pool a batch holds never changes under it...
    assert!(!clients
        .tools()
        .0
        .iter()
        .any(|t| t.name() == "mcp__py__added"));
    // ...the host refreshes between messages.
    let deadline = Instant::now() + Duration::from_secs(5);
    while !clients.refresh().await {
        assert!(Instant::now() < deadline, "no tools/list_changed arrived");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (after, _) = clients.tools();
    let out = call(&after, "mcp__py__added", json!({}), dir.path())
        .await
        .unwrap();
    assert_eq!(text(&out), "added works");
    clients.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_server_is_a_diagnostic_and_the_others_work() {
    let dir = tempfile::tempdir().unwrap();
    let broken = baton_mcp::ServerSpec::stdio(
        "broken",
        "python3",
        vec![
            "-c".into(),
            "import sys; print('boom', file=sys.stderr); sys.exit(2)".into(),
        ],
    );
    let missing = baton_mcp::ServerSpec::stdio("missing", "/nonexistent/server", vec![]);
    let clients = start(vec![broken, missing, python_server(&[])], dir.path()).await;
    let diags = clients.diagnostics().join("\n");
    assert!(
        diags.contains("\"broken\"") && diags.contains("boom"),
        "{diags}"
    );
    assert!(
        diags.contains("\"missing\"") && diags.contains("cannot start"),
        "{diags}"
    );
    let (tools, _) = clients.tools();
    let out = call(&tools, "mcp__py__echo", json!({"text": "fine"}), dir.path())
        .await
        .unwrap();
    assert_eq!(text(&out), "fine");
    let states: Vec<String> = clients.statuses().iter().map(|s| s.state.label()).collect();
    assert!(
        states[0].starts_with("failed") && states[2] == "ready",
        "{states:?}"
    );
    clients.shutdown().await;
}

/// A server that forks a daemon into a session of its own (out of the
/// server's process group, where a plain `killpg` never reaches) leaves
/// nothing running once the client is closed, in order or at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daemon_the_server_started_in_its_own_session_ends_with_the_client() {
    let dir = tempfile::tempdir().unwrap();
    for orderly in [true, false] {
        let marked = Marked::new("mcp-daemon");
        let server = baton_mcp::ServerSpec::stdio(
            "py",
            "bash",
            vec![
                "-c".into(),
                format!(
                    "{} exec python3 -u {}",
                    marked.daemon(),
                    script("misbehaving.py")
                ),
            ],
        );
        let clients = start(vec![server], dir.path()).await;
        assert_eq!(clients.statuses()[0].state, ServerState::Ready);
        assert_eq!(
            marked.settle(1, Duration::from_secs(30)).await,
            1,
            "the daemon did not start"
        );
        if orderly {
            clients.shutdown().await;
        } else {
            clients.kill_now();
        }
        assert_eq!(
            marked.settle(0, Duration::from_secs(10)).await,
            0,
            "the daemon outlived the client (orderly stop: {orderly})"
        );
    }
}
