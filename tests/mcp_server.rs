//! `baton mcp serve` driven by a real MCP client (the official Python SDK,
//! `mcp` on PyPI, installed by `.ci/deps`), over stdio and streamable HTTP,
//! plus the HTTP safety checks spoken as raw HTTP.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::BATON;

const CLIENT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp_server/client.py");

fn require_python_sdk() {
    let ok = Command::new("python3")
        .args(["-c", "import mcp, httpx2"])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(
        ok,
        "the official MCP Python SDK is missing: run ./.ci/deps (pip package mcp==2.3.0)"
    );
}

fn settings(dir: &Path) -> String {
    let path = dir.join("settings.json");
    // Every Bash command is allowed; Write is not, so it asks.
    std::fs::write(&path, r#"{"permissions": {"allow": ["Bash"]}}"#).unwrap();
    path.display().to_string()
}

fn run_client(args: &[&str]) {
    let out = Command::new("python3")
        .arg(CLIENT)
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "MCP client failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(stdout.contains("legacy: ok"), "{stdout}");
    assert!(stdout.contains("auto: ok"), "{stdout}");
}

#[test]
fn python_sdk_client_over_stdio() {
    require_python_sdk();
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().canonicalize().unwrap();
    let settings = settings(&work);
    run_client(&["stdio", BATON, work.to_str().unwrap(), &settings]);
}

/// A `baton mcp serve --http` child; killed (and reaped) on drop.
struct HttpServer {
    child: Child,
    port: u16,
}

impl HttpServer {
    fn start(work: &Path, token: Option<&str>, extra: &[&str]) -> HttpServer {
        let settings = settings(work);
        let mut cmd = crate::support::baton();
        cmd.args(["mcp", "serve", "--http", "127.0.0.1:0", "--cwd"])
            .arg(work)
            .args(["--settings", &settings, "--state-dir"])
            .arg(work.join(".state"))
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .env_remove("BATON_MCP_TOKEN");
        if let Some(t) = token {
            cmd.env("BATON_MCP_TOKEN", t);
        }
        let mut child = cmd.spawn().unwrap();
        let url = baton_test_support::worker::listening_url(child.stderr.take().unwrap());
        let port = baton_test_support::worker::port_of(&url);
        HttpServer { child, port }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// Sends one raw HTTP request; returns the status code.
    fn status(&self, request: &str) -> u16 {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        s.write_all(request.as_bytes()).unwrap();
        let mut head = [0u8; 12];
        s.read_exact(&mut head).unwrap();
        String::from_utf8_lossy(&head[9..12]).parse().unwrap()
    }

    /// Stops the server the way an orchestrator does, and waits for it.
    fn terminate(mut self) -> std::process::ExitStatus {
        let pid = self.child.id() as i32;
        // SAFETY: a plain kill(2) of our own child.
        unsafe { libc_kill(pid, 15) };
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "the server ignored SIGTERM");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

fn post(port: u16, headers: &[&str], body: &str) -> String {
    let mut req = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for h in headers {
        req.push_str(h);
        req.push_str("\r\n");
    }
    req.push_str("\r\n");
    req.push_str(body);
    req
}

#[test]
fn python_sdk_client_over_http_with_a_token() {
    require_python_sdk();
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().canonicalize().unwrap();
    let server = HttpServer::start(&work, Some("t0ken-for-tests"), &[]);
    run_client(&[
        "http",
        &server.url(),
        "t0ken-for-tests",
        work.to_str().unwrap(),
    ]);
    let status = server.terminate();
    assert!(status.success(), "SIGTERM is a clean shutdown: {status:?}");
}

#[test]
fn http_rejects_what_it_must() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().canonicalize().unwrap();
    let server = HttpServer::start(&work, Some("right"), &["--max-request-bytes", "2048"]);
    let port = server.port;
    let auth = "Authorization: Bearer right";

    // The token is required, and must be the right one.
    assert_eq!(server.status(&post(port, &[], INIT)), 401);
    assert_eq!(
        server.status(&post(port, &["Authorization: Bearer wrong"], INIT)),
        401
    );
    assert_eq!(
        server.status(&post(port, &["Authorization: right"], INIT)),
        401
    );
    assert_eq!(server.status(&post(port, &[auth], INIT)), 200);

    // DNS rebinding: a Host that is not ours.
    let rebound = post(port, &[auth], INIT)
        .replace(&format!("Host: 127.0.0.1:{port}"), "Host: attacker.example");
    assert_eq!(server.status(&rebound), 403);

    // A browser page from elsewhere.
    let from_page = post(port, &[auth, "Origin: https://attacker.example"], INIT);
    assert_eq!(server.status(&from_page), 403);

    // Too large a body.
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(4096)
    );
    assert_eq!(server.status(&post(port, &[auth], &big)), 413);

    // Probes need no token and learn nothing.
    let health =
        format!("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    assert_eq!(server.status(&health), 200);
}

#[test]
fn refuses_to_listen_beyond_loopback_without_a_token() {
    let out = crate::support::baton()
        .args(["mcp", "serve", "--http", "0.0.0.0:0"])
        .env_remove("BATON_MCP_TOKEN")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("without a token"), "{stderr}");
}

/// Baton's own MCP client pointed at `baton mcp serve` through an MCP config
/// file: the inner Baton's Bash becomes `mcp__inner__Bash` of the outer one.
#[test]
fn baton_as_a_client_of_baton_over_mcp_config() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let inner = root.join("inner");
    let outer = root.join("outer");
    std::fs::create_dir_all(&inner).unwrap();
    std::fs::create_dir_all(&outer).unwrap();
    let config = root.join("mcp.json");
    std::fs::write(
        &config,
        serde_json::json!({"mcpServers": {"inner": {
            "command": BATON,
            "args": ["mcp", "serve", "--cwd", inner.to_str().unwrap(),
                     "--permission-mode", "bypassPermissions",
                     "--state-dir", inner.join(".state").to_str().unwrap()]
        }}})
        .to_string(),
    )
    .unwrap();
    let settings = root.join("settings.json");
    std::fs::write(&settings, r#"{"permissions": {"allow": ["mcp__inner"]}}"#).unwrap();
    let message = root.join("message.json");
    std::fs::write(
        &message,
        serde_json::json!({"role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "mcp__inner__Bash",
             "input": {"command": "pwd; echo round trip"}}
        ]})
        .to_string(),
    )
    .unwrap();
    let out = crate::support::baton()
        .args(["run", "--strict-mcp-config", "--mcp-config"])
        .arg(&config)
        .arg("--settings")
        .arg(&settings)
        .arg("--cwd")
        .arg(&outer)
        .arg("--state-dir")
        .arg(outer.join(".state"))
        .arg(&message)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("round trip"), "{stdout}\n{stderr}");
    // The command ran in the inner server's directory, not the outer one's.
    assert!(stdout.contains(inner.to_str().unwrap()), "{stdout}");
}
