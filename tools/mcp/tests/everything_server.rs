//! Against the reference servers (`@modelcontextprotocol/server-everything`
//! over stdio and streamable HTTP, `server-filesystem` over stdio), installed
//! pinned by `.ci/deps.d/30-mcp.sh`.

use std::net::TcpListener;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use baton_engine::{CancelScope, ContentBlock, ProgressSink};
use baton_mcp::{McpClients, ServerSpec};
use common::*;
use parking_lot::Mutex;
use serde_json::json;

use crate::common;

fn everything_stdio() -> ServerSpec {
    ServerSpec::stdio(
        "everything",
        node_bin("mcp-server-everything"),
        vec!["stdio".into()],
    )
}

/// Exercises one connected `everything` server; `name` is its config name.
async fn exercise(clients: &McpClients, name: &str, dir: &std::path::Path) {
    assert!(
        clients.diagnostics().is_empty(),
        "{:?}",
        clients.diagnostics()
    );
    let (tools, problems) = clients.tools();
    assert!(problems.is_empty(), "{problems:?}");
    let t = |tool: &str| format!("mcp__{name}__{tool}");

    // Annotations: echo is readOnlyHint true, toggle-simulated-logging false
    // (and not destructive, not open world).
    let echo = find(&tools, &t("echo"));
    let parsed = echo.parse(&json!({"message": "m"})).unwrap();
    assert!(echo.is_concurrency_safe(&parsed) && echo.is_read_only(&parsed));
    let toggle = find(&tools, &t("toggle-simulated-logging"));
    let parsed = toggle.parse(&json!({})).unwrap();
    assert!(!toggle.is_read_only(&parsed) && !toggle.is_concurrency_safe(&parsed));
    assert!(!toggle.is_destructive(&parsed) && !toggle.is_open_world(&parsed));

    let out = call(&tools, &t("echo"), json!({"message": "hi there"}), dir)
        .await
        .unwrap();
    assert!(text(&out).contains("hi there"), "{out:?}");
    let out = call(&tools, &t("get-sum"), json!({"a": 2, "b": 40}), dir)
        .await
        .unwrap();
    assert!(text(&out).contains("42"), "{out:?}");

    let out = call(&tools, &t("get-tiny-image"), json!({}), dir)
        .await
        .unwrap();
    assert!(out.content.iter().any(|b| matches!(b, ContentBlock::Image { media_type, data } if media_type == "image/png" && !data.is_empty())), "{out:?}");

    let out = call(
        &tools,
        &t("get-structured-content"),
        json!({"location": "New York"}),
        dir,
    )
    .await
    .unwrap();
    assert!(text(&out).contains("temperature"), "{out:?}");
    assert!(find(&tools, &t("get-structured-content"))
        .def()
        .output_schema_value()
        .is_some());

    let out = call(&tools, &t("get-resource-links"), json!({"count": 2}), dir)
        .await
        .unwrap();
    assert!(
        text(&out).contains("[resource link] demo://resource/dynamic/"),
        "{}",
        text(&out)
    );

    let out = call(
        &tools,
        &t("get-resource-reference"),
        json!({"resourceType": "Text", "resourceId": 1}),
        dir,
    )
    .await
    .unwrap();
    assert!(
        text(&out).contains("[resource demo://resource/dynamic/text/1]"),
        "{}",
        text(&out)
    );

    // Progress notifications become progress events of the call.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = {
        let seen = Arc::clone(&seen);
        ProgressSink::new(move |p| seen.lock().push(p))
    };
    let ctx = ctx_with(dir, CancelScope::new(), sink);
    let out = call_with(
        &find(&tools, &t("trigger-long-running-operation")),
        json!({"duration": 1, "steps": 4}),
        ctx,
    )
    .await
    .unwrap();
    assert!(text(&out).contains("completed"), "{}", text(&out));
    let seen = seen.lock().clone();
    // The last notification may race the result; the ones before it cannot.
    assert!((3..=4).contains(&seen.len()), "{seen:?}");
    assert_eq!(seen[0].message, "1 of 4");
    assert_eq!(seen[2].data.as_ref().unwrap()["total"], json!(4.0));

    // Resources through the two resource tools.
    let out = call(
        &tools,
        "ReadMcpResourceTool",
        json!({"server": name, "uri": "demo://resource/dynamic/text/3"}),
        dir,
    )
    .await
    .unwrap();
    assert!(
        text(&out).contains("demo://resource/dynamic/text/3"),
        "{}",
        text(&out)
    );
    let out = call(&tools, "ListMcpResourcesTool", json!({"server": name}), dir)
        .await
        .unwrap();
    assert!(
        text(&out).contains("demo://resource/static/document/"),
        "{}",
        text(&out)
    );

    // Elicitation with no host: declined, and the result says so.
    let out = call(&tools, &t("trigger-elicitation-request"), json!({}), dir)
        .await
        .unwrap();
    assert!(
        text(&out).to_lowercase().contains("decline"),
        "{}",
        text(&out)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_over_stdio() {
    let dir = tempfile::tempdir().unwrap();
    let clients = start(vec![everything_stdio()], dir.path()).await;
    exercise(&clients, "everything", dir.path()).await;
    let status = &clients.statuses()[0];
    assert_eq!(
        status.protocol.as_deref(),
        Some("2025-11-25"),
        "the Node SDK speaks the initialize generation"
    );
    let pid = clients.servers()[0].pid().unwrap();
    clients.shutdown().await;
    assert!(!alive(pid), "server left after shutdown");
}

/// The everything server on streamable HTTP, in its own process group.
struct HttpServer {
    child: std::process::Child,
    url: String,
}

impl HttpServer {
    fn start() -> HttpServer {
        use std::os::unix::process::CommandExt;
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut child = std::process::Command::new(node_bin("mcp-server-everything"))
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        // A probe whose own local port is the target's has connected to
        // itself (a TCP self-connect), not to the server; a server that
        // exited lost the port to someone else.
        let listening = || {
            std::net::TcpStream::connect(("127.0.0.1", port))
                .is_ok_and(|s| s.local_addr().is_ok_and(|a| a.port() != port))
        };
        while !listening() {
            let exited = child.try_wait().ok().flatten();
            assert!(
                exited.is_none() && Instant::now() < deadline,
                "the HTTP server did not start ({exited:?})"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        HttpServer {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::killpg(pid, nix::sys::signal::Signal::SIGKILL);
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_over_streamable_http() {
    let server = HttpServer::start();
    let dir = tempfile::tempdir().unwrap();
    let mut spec = ServerSpec::http("remote", &server.url);
    if let baton_mcp::TransportSpec::Http { headers, .. } = &mut spec.transport {
        headers.insert("X-Test".into(), "baton".into());
    }
    let clients = start(vec![spec], dir.path()).await;
    exercise(&clients, "remote", dir.path()).await;
    assert_eq!(clients.statuses()[0].transport, "http");
    // Parallel calls over one HTTP connection are not serialised either.
    let (tools, _) = clients.tools();
    let op = find(&tools, "mcp__remote__trigger-long-running-operation");
    let started = Instant::now();
    let calls = (0..8).map(|_| call_with(&op, json!({"duration": 1, "steps": 2}), ctx(dir.path())));
    for r in futures::future::join_all(calls).await {
        assert!(text(&r.unwrap()).contains("completed"));
    }
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    clients.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filesystem_server_reads_and_lists() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("hello.txt"), "hello from disk\n").unwrap();
    let spec = ServerSpec::stdio(
        "fs",
        node_bin("mcp-server-filesystem"),
        vec![root.display().to_string()],
    );
    let clients = start(vec![spec], &root).await;
    assert!(
        clients.diagnostics().is_empty(),
        "{:?}",
        clients.diagnostics()
    );
    let (tools, _) = clients.tools();
    let read = find(&tools, "mcp__fs__read_text_file");
    assert!(read.is_read_only(&read.parse(&json!({"path": "x"})).unwrap()));
    let write = find(&tools, "mcp__fs__write_file");
    assert!(!write.is_read_only(&write.parse(&json!({"path": "x", "content": "y"})).unwrap()));
    let out = call(
        &tools,
        "mcp__fs__read_text_file",
        json!({"path": root.join("hello.txt")}),
        &root,
    )
    .await
    .unwrap();
    assert!(text(&out).contains("hello from disk"), "{out:?}");
    let out = call(
        &tools,
        "mcp__fs__list_directory",
        json!({"path": root}),
        &root,
    )
    .await
    .unwrap();
    assert!(text(&out).contains("hello.txt"), "{out:?}");
    // Outside its roots the server refuses: an error result, not a failure.
    let out = call(
        &tools,
        "mcp__fs__read_text_file",
        json!({"path": "/etc/hostname"}),
        &root,
    )
    .await
    .unwrap();
    assert!(out.is_error, "{out:?}");
    clients.shutdown().await;
}
