//! OAuth for remote MCP servers, end to end: `baton serve` logs in to a
//! real OAuth-protected MCP server on 127.0.0.1
//! (tests/fixtures/oauth/protected_server.py: its own authorization
//! server, PKCE checked, short-lived tokens) through the serve host flow —
//! an `mcp_oauth` line whose URL the host fetches like a browser, and the
//! loopback redirect — then calls a tool, gets through an expired token by
//! refreshing, and after a restart works from the stored token without a
//! new login. No token ever shows in what Baton prints. Without a host
//! that can open a URL, the server is reported with how to log in, and
//! other servers keep working.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
/// Lifetime of the fixture's access tokens, in seconds.
const EXPIRY: u64 = 3;

/// The protected server; killed on drop.
struct Protected {
    child: Child,
    url: String,
    log: PathBuf,
}

impl Protected {
    fn start(dir: &Path) -> Protected {
        let log = dir.join("server-log.jsonl");
        let mut child = Command::new("python3")
            .arg(Path::new(ROOT).join("tests/fixtures/oauth/protected_server.py"))
            .arg(&log)
            .arg(EXPIRY.to_string())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 is needed");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("listening ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_string();
        Protected { child, url, log }
    }

    fn events(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    fn count(&self, event: &str, grant: Option<&str>) -> usize {
        self.events()
            .iter()
            .filter(|e| e["event"] == event && grant.is_none_or(|g| e["grant"] == g))
            .count()
    }

    /// Every token it handed out.
    fn tokens(&self) -> Vec<String> {
        self.events()
            .iter()
            .flat_map(|e| [e["access_token"].as_str(), e["refresh_token"].as_str()])
            .flatten()
            .map(str::to_string)
            .collect()
    }
}

impl Drop for Protected {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The work directory: `mcp.json` naming the protected server (over
/// streamable HTTP, or the legacy SSE transport with `sse`) and a second,
/// stdio one that needs no login; settings allowing both.
fn workdir(dir: &Path, url: &str, sse: bool) {
    let fixture = Path::new(ROOT).join("tests/fixtures/oauth/echo_stdio.py");
    let prot = if sse {
        json!({"type": "sse", "url": url.replace("/mcp", "/sse")})
    } else {
        json!({"type": "http", "url": url})
    };
    std::fs::write(
        dir.join("mcp.json"),
        json!({"mcpServers": {
            "prot": prot,
            "plain": {"command": "python3", "args": [fixture]},
        }})
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        dir.join("settings.json"),
        json!({"permissions": {"allow": ["mcp__prot", "mcp__plain"]}}).to_string(),
    )
    .unwrap();
}

/// One `baton serve` session playing the host; returns everything Baton
/// printed (stdout and stderr) and the number of `mcp_oauth` lines.
struct Serve {
    child: Child,
    stdin: ChildStdin,
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
    printed: String,
    logins: usize,
}

impl Serve {
    fn start(dir: &Path, home: &Path) -> Serve {
        let mut child = crate::support::baton()
            .args(["serve", "--strict-mcp-config", "--mcp-config", "mcp.json"])
            .args(["--settings", "settings.json", "--cwd"])
            .arg(dir)
            .arg("--state-dir")
            .arg(dir.join(".state"))
            .current_dir(dir)
            .env("HOME", home)
            .env_remove("XDG_STATE_HOME")
            .env("BATON_LOG", "debug")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Serve {
            child,
            stdin,
            lines,
            printed: String::new(),
            logins: 0,
        }
    }

    fn send(&mut self, value: Value) {
        writeln!(self.stdin, "{value}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Calls `tool` and returns its result block, acting as the host
    /// (fetching login URLs as a browser would) until the batch is done.
    fn call(&mut self, tool: &str) -> (Value, bool) {
        self.send(
            json!({"type": "message", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": tool, "input": {}}]}}),
        );
        let mut result = (Value::Null, false);
        while let Some(Ok(line)) = self.lines.next() {
            self.printed.push_str(&line);
            self.printed.push('\n');
            let msg: Value = serde_json::from_str(&line).unwrap();
            match msg["type"].as_str() {
                Some("mcp_oauth") => {
                    self.logins += 1;
                    let url = msg["url"].as_str().unwrap().to_string();
                    // The browser: follow the authorization server's
                    // redirect to Baton's loopback listener.
                    std::thread::spawn(move || {
                        let _ = Command::new("curl")
                            .args(["-s", "-L", "-o", "/dev/null", "--max-time", "60", &url])
                            .status();
                    });
                }
                Some("result") => {
                    result = (msg["block"].clone(), msg["outcome"]["kind"] == "success");
                }
                Some("done") => break,
                _ => {}
            }
        }
        result
    }

    /// Ends the session; returns everything printed.
    fn finish(mut self) -> String {
        self.send(json!({"type": "shutdown"}));
        drop(self.stdin);
        for line in self.lines.by_ref().map_while(Result::ok) {
            self.printed.push_str(&line);
            self.printed.push('\n');
        }
        let out = self.child.wait_with_output().unwrap();
        self.printed.push_str(&String::from_utf8_lossy(&out.stderr));
        self.printed
    }
}

#[test]
fn login_through_the_host_refresh_and_restart() {
    let dir = tempfile::tempdir().unwrap();
    let server = Protected::start(dir.path());
    workdir(dir.path(), &server.url, false);
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();

    // First session: the server refuses, the host gets the URL, the login
    // completes through the loopback listener, the call goes through.
    let mut serve = Serve::start(dir.path(), &home);
    let (block, ok) = serve.call("mcp__prot__whoami");
    assert!(ok, "first call failed: {block}\n{}", serve.printed);
    assert!(block
        .to_string()
        .contains("hello from the protected server"));
    assert_eq!(serve.logins, 1, "one login expected");
    assert_eq!(server.count("token", Some("authorization_code")), 1);
    let resource = server
        .events()
        .into_iter()
        .find(|e| e["event"] == "authorize")
        .map(|e| e["resource"].clone());
    assert_eq!(resource, Some(json!(server.url)), "the resource parameter");

    // The token expires; the next call refreshes instead of logging in.
    std::thread::sleep(Duration::from_secs(EXPIRY + 2));
    let (block, ok) = serve.call("mcp__prot__whoami");
    assert!(ok, "call after expiry failed: {block}\n{}", serve.printed);
    assert_eq!(serve.logins, 1, "no second login");
    assert!(
        server.count("token", Some("refresh_token")) >= 1,
        "refreshed"
    );
    let mut printed = serve.finish();

    // Tokens are kept per server, readable by the user only.
    let store = home.join(".local/state/baton/mcp-oauth");
    let files: Vec<_> = std::fs::read_dir(&store).unwrap().flatten().collect();
    assert_eq!(files.len(), 1, "one token file");
    let mode = files[0].metadata().unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);

    // Restart (after the stored access token expired too): the stored
    // refresh token carries on, with no new login.
    std::thread::sleep(Duration::from_secs(EXPIRY + 1));
    let codes_before = server.count("token", Some("authorization_code"));
    let mut serve = Serve::start(dir.path(), &home);
    let (block, ok) = serve.call("mcp__prot__whoami");
    assert!(ok, "call after restart failed: {block}\n{}", serve.printed);
    assert_eq!(serve.logins, 0, "the stored token was used");
    assert_eq!(
        server.count("token", Some("authorization_code")),
        codes_before
    );
    printed.push_str(&serve.finish());

    // No token in anything Baton printed (with debug logging on).
    let tokens = server.tokens();
    assert!(tokens.len() >= 3);
    for token in tokens {
        assert!(!printed.contains(&token), "a token leaked:\n{printed}");
    }
}

#[test]
fn without_a_host_the_server_says_how_to_log_in_and_others_work() {
    let dir = tempfile::tempdir().unwrap();
    let server = Protected::start(dir.path());
    workdir(dir.path(), &server.url, false);
    let out = crate::support::baton()
        .args(["mcp", "list", "--json", "--strict-mcp-config"])
        .args(["--mcp-config", "mcp.json", "--cwd"])
        .arg(dir.path())
        .current_dir(dir.path())
        .env("HOME", dir.path())
        .env_remove("XDG_STATE_HOME")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let listed: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{e}: {text}\n{}", String::from_utf8_lossy(&out.stderr)));
    let servers = listed["servers"].as_array().unwrap();
    let state = |name: &str| {
        servers
            .iter()
            .find(|s| s["name"] == name)
            .map(|s| s["state"].as_str().unwrap_or("").to_string())
            .unwrap_or_default()
    };
    assert!(
        state("prot").contains("baton mcp login prot"),
        "{}",
        state("prot")
    );
    assert_eq!(state("plain"), "ready");
    assert_eq!(server.count("token", None), 0);
}

#[test]
fn legacy_sse_server_logs_in_the_same_way() {
    let dir = tempfile::tempdir().unwrap();
    let server = Protected::start(dir.path());
    workdir(dir.path(), &server.url, true);
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let mut serve = Serve::start(dir.path(), &home);
    let (block, ok) = serve.call("mcp__prot__whoami");
    assert!(ok, "call failed: {block}\n{}", serve.printed);
    assert_eq!(serve.logins, 1);
    let mut printed = serve.finish();
    // A restart after expiry: refreshed before connecting, no new login.
    std::thread::sleep(Duration::from_secs(EXPIRY + 1));
    let mut serve = Serve::start(dir.path(), &home);
    let (block, ok) = serve.call("mcp__prot__whoami");
    assert!(ok, "call after restart failed: {block}\n{}", serve.printed);
    assert_eq!(serve.logins, 0);
    assert!(server.count("token", Some("refresh_token")) >= 1);
    printed.push_str(&serve.finish());
    for token in server.tokens() {
        assert!(!printed.contains(&token), "a token leaked:\n{printed}");
    }
}
