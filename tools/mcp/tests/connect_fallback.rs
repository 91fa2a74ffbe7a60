//! Connecting to servers that do not speak `server/discover`, or answer it
//! oddly or never: Baton falls back to `initialize` at once (or after the
//! short probe limit) and never fails because of the probe. Real servers:
//! a hand-written one (servers/handmade.py, stdio and HTTP) and one on the
//! official Python SDK, which speaks the new handshake.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use baton_mcp::{ServerSpec, DISCOVER_PROBE};
use common::*;
use serde_json::json;

use crate::common;

/// The promise: the fallback never waits longer than this. Much
/// more than the probe limit plus a Python start-up, and less than the
/// 10 s rmcp alone would wait for a silent probe.
const NEVER_AFTER: Duration = Duration::from_secs(9);

fn handmade() -> String {
    workspace()
        .join("tools/mcp/tests/servers/handmade.py")
        .display()
        .to_string()
}

fn stdio(mode: &str) -> ServerSpec {
    ServerSpec::stdio(
        "hm",
        "python3",
        vec!["-u".into(), handmade(), "--discover".into(), mode.into()],
    )
}

/// Connects to `spec`, checks the classic handshake was used and how long
/// it took, and returns the methods the server received.
async fn connects_classically(spec: ServerSpec, dir: &Path, what: &str) -> Vec<String> {
    let started = Instant::now();
    let clients = start(vec![spec], dir).await;
    let took = started.elapsed();
    assert!(
        clients.diagnostics().is_empty(),
        "{what}: {:?}",
        clients.diagnostics()
    );
    assert!(took < NEVER_AFTER, "{what}: connecting took {took:?}");
    let status = &clients.statuses()[0];
    assert_eq!(status.protocol.as_deref(), Some("2025-11-25"), "{what}");
    let (tools, _) = clients.tools();
    let out = call(&tools, "mcp__hm__handshake", json!({}), dir)
        .await
        .unwrap_or_else(|e| panic!("{what}: {e:?}"));
    clients.shutdown().await;
    let seen: Vec<String> = serde_json::from_str(&text(&out)).unwrap();
    assert!(
        seen.iter().filter(|m| *m == "initialize").count() == 1,
        "{what}: {seen:?}"
    );
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn any_odd_answer_to_discover_falls_back_at_once_over_stdio() {
    let dir = tempfile::tempdir().unwrap();
    for mode in ["empty", "error", "reject", "nonsense", "old"] {
        let seen = connects_classically(stdio(mode), dir.path(), mode).await;
        // One process, one connection: the probe, then `initialize`.
        assert_eq!(
            &seen[..3],
            ["server/discover", "initialize", "notifications/initialized"],
            "{mode}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_or_slow_probe_falls_back_after_the_probe_limit_over_stdio() {
    let dir = tempfile::tempdir().unwrap();
    for mode in ["silent", "late"] {
        let started = Instant::now();
        let seen = connects_classically(stdio(mode), dir.path(), mode).await;
        assert!(
            started.elapsed() >= DISCOVER_PROBE,
            "{mode}: the probe was not waited for"
        );
        // `initialize` went to the same process, behind the probe; the
        // late `{}` was dropped instead of being taken for its answer.
        assert_eq!(&seen[..2], ["server/discover", "initialize"], "{mode}");
    }
}

/// The hand-written server over streamable HTTP; killed on drop.
struct Http {
    child: Child,
    url: String,
}

impl Http {
    fn start(mode: &str) -> Http {
        let mut child = Command::new("python3")
            .args(["-u", &handmade(), "--http", "--discover", mode])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).unwrap();
        let port: u16 = line.trim().trim_start_matches("PORT ").parse().unwrap();
        Http {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

impl Drop for Http {
    fn drop(&mut self) {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::killpg(pid, nix::sys::signal::Signal::SIGKILL);
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn odd_or_no_answers_to_discover_fall_back_over_http() {
    let dir = tempfile::tempdir().unwrap();
    for mode in ["empty", "reject", "nonsense", "silent"] {
        let server = Http::start(mode);
        let spec = ServerSpec::http("hm", server.url.clone());
        let seen = connects_classically(spec, dir.path(), mode).await;
        assert_eq!(seen.first().map(String::as_str), Some("server/discover"));
    }
}

/// Connects to `spec`, which answers `server/discover` properly, and
/// checks that the new handshake was used alone.
async fn connects_newly(spec: ServerSpec, dir: &Path) {
    let clients = start(vec![spec], dir).await;
    assert!(
        clients.diagnostics().is_empty(),
        "{:?}",
        clients.diagnostics()
    );
    assert_eq!(
        clients.statuses()[0].protocol.as_deref(),
        Some("2026-07-28")
    );
    let (tools, _) = clients.tools();
    let out = call(&tools, "mcp__hm__handshake", json!({}), dir)
        .await
        .unwrap();
    clients.shutdown().await;
    let seen: Vec<String> = serde_json::from_str(&text(&out)).unwrap();
    assert_eq!(seen.first().map(String::as_str), Some("server/discover"));
    assert!(!seen.iter().any(|m| m == "initialize"), "{seen:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_answers_discover_properly_gets_the_new_handshake() {
    let dir = tempfile::tempdir().unwrap();
    connects_newly(stdio("modern"), dir.path()).await;
    let server = Http::start("modern");
    connects_newly(ServerSpec::http("hm", server.url.clone()), dir.path()).await;
}
