//! Claude Code's `sandbox` settings, enforced on real commands through
//! `baton run`: writes, protected paths, `denyRead` and merged Read denies,
//! the network (refused; allowed per domain through Baton's proxy),
//! `dangerouslyDisableSandbox`, `failIfUnavailable`, and the fallback when
//! the kernel cannot confine.

use std::path::{Path, PathBuf};
use std::process::Command;

use baton_run::confinable;
use serde_json::{json, Value};

use crate::support::baton_run;

struct Scene {
    _dir: tempfile::TempDir,
    root: PathBuf,
    work: PathBuf,
}

fn scene() -> Scene {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().canonicalize().expect("canonical");
    let work = root.join("work");
    std::fs::create_dir_all(work.join(".git")).expect("mkdir");
    std::fs::create_dir_all(work.join("secrets")).expect("mkdir");
    std::fs::write(work.join(".git/config"), "[core]\n").expect("write");
    std::fs::write(work.join(".mcp.json"), "{\"mcpServers\": {}}\n").expect("write");
    std::fs::write(work.join("secrets/key"), "KEY-MARKER\n").expect("write");
    std::fs::write(work.join("private.txt"), "PRIVATE-MARKER\n").expect("write");
    std::fs::write(work.join("notes.txt"), "notes\n").expect("write");
    Scene {
        _dir: dir,
        root,
        work,
    }
}

/// Runs the calls in one message (each command ends in `|| echo FAILED`,
/// so that a failure does not cancel the others); each result's text.
fn run(s: &Scene, settings: &Value, env: &[(&str, &str)], calls: &[Value]) -> Vec<String> {
    let state = tempfile::tempdir().expect("state dir");
    baton_run::bash_calls(&s.work, state.path(), Some(settings), env, calls)
        .into_iter()
        .map(|(text, _)| text)
        .collect()
}

fn cmd(c: &str) -> Value {
    json!({"command": format!("{c} || echo FAILED")})
}

fn sandbox(extra: Value) -> Value {
    let mut settings = json!({"sandbox": {"enabled": true, "autoAllowBashIfSandboxed": true}});
    if let (Some(obj), Some(more)) = (settings.as_object_mut(), extra.as_object()) {
        for (k, v) in more {
            if k == "sandbox" {
                for (sk, sv) in v.as_object().into_iter().flatten() {
                    obj["sandbox"][sk] = sv.clone();
                }
            } else {
                obj.insert(k.clone(), v.clone());
            }
        }
    }
    settings
}

#[test]
fn writes_inside_only_and_protected_paths_stay_protected() {
    if !confinable() {
        return;
    }
    let s = scene();
    let outside = s.root.join("outside.txt");
    let results = run(
        &s,
        &sandbox(json!({})),
        &[],
        &[
            cmd("python3 -c \"open('made.txt','w').write('x')\" && echo MADE"),
            cmd(&format!(
                "python3 -c \"open('{}','w').write('x')\"",
                outside.display()
            )),
            cmd("python3 -c \"open('.git/config','a').write('[alias]')\""),
            cmd("python3 -c \"import os; os.remove('.mcp.json')\""),
            cmd("python3 -c \"import os; os.rename('notes.txt', '.mcp.json')\""),
        ],
    );
    assert!(results[0].contains("MADE"), "{results:?}");
    assert!(s.work.join("made.txt").exists());
    assert!(
        results[1].contains("FAILED") && !outside.exists(),
        "{results:?}"
    );
    for r in &results[2..] {
        assert!(r.contains("FAILED"), "{results:?}");
    }
    assert_eq!(
        std::fs::read_to_string(s.work.join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert!(std::fs::read_to_string(s.work.join(".mcp.json"))
        .unwrap()
        .contains("mcpServers"));
}

#[test]
fn deny_read_and_merged_read_denies_are_unreadable() {
    if !confinable() {
        return;
    }
    let s = scene();
    let settings = sandbox(json!({
        "sandbox": {"filesystem": {"denyRead": ["./private.txt"]}},
        "permissions": {"deny": ["Read(secrets/**)"]}
    }));
    let results = run(
        &s,
        &settings,
        &[],
        &[
            cmd("python3 -c \"print(open('private.txt').read())\""),
            cmd("python3 -c \"print(open('secrets/key').read())\""),
            cmd("python3 -c \"print(open('notes.txt').read())\""),
        ],
    );
    assert!(!results[0].contains("PRIVATE-MARKER"), "{results:?}");
    assert!(!results[1].contains("KEY-MARKER"), "{results:?}");
    assert!(results[2].contains("notes"), "{results:?}");
}

#[test]
fn the_network_is_refused_without_allowed_domains() {
    if !confinable() {
        return;
    }
    let s = scene();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let port = listener.local_addr().expect("addr").port();
    let results = run(
        &s,
        &sandbox(json!({})),
        &[],
        &[
            cmd(&format!("python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port})); print('CONNECTED')\"")),
            cmd(&format!("curl -sS -m 5 http://127.0.0.1:{port}/ && echo CONNECTED")),
        ],
    );
    for r in &results {
        assert!(
            !r.contains("CONNECTED") && r.contains("FAILED"),
            "{results:?}"
        );
    }
    assert!(listener.accept().is_err());
}

#[test]
fn dangerously_disable_sandbox_asks_or_is_ignored() {
    if !confinable() {
        return;
    }
    let s = scene();
    let outside = s.root.join("escaped.txt");
    let write_outside = format!(
        "python3 -c \"open('{}','w').write('x')\"",
        outside.display()
    );
    let flagged = |c: &str| json!({"command": format!("{c} || echo FAILED"), "dangerouslyDisableSandbox": true});
    // Allowed by the settings: the call leaves the sandbox, so it needs
    // approval like any unsandboxed command; nobody approves here.
    let results = run(&s, &sandbox(json!({})), &[], &[flagged(&write_outside)]);
    assert!(results[0].contains("approval"), "{results:?}");
    assert!(!outside.exists());
    // With an allow rule the user vouches for it: it runs unsandboxed.
    let ruled = sandbox(json!({"permissions": {"allow": ["Bash(python3:*)"]}}));
    let results = run(&s, &ruled, &[], &[flagged(&write_outside)]);
    assert!(!results[0].contains("FAILED"), "{results:?}");
    assert!(outside.exists());
    std::fs::remove_file(&outside).expect("remove");
    // Forbidden by the settings: ignored, the command stays sandboxed, and
    // the model is told.
    let strict = sandbox(json!({
        "sandbox": {"allowUnsandboxedCommands": false},
        "permissions": {"allow": ["Bash(python3:*)"]}
    }));
    let results = run(&s, &strict, &[], &[flagged(&write_outside)]);
    assert!(results[0].contains("FAILED"), "{results:?}");
    assert!(
        results[0].contains("dangerouslyDisableSandbox was ignored"),
        "{results:?}"
    );
    assert!(!outside.exists());
}

#[test]
fn when_the_kernel_cannot_confine() {
    let s = scene();
    let unavailable = [(baton_engine::sandbox::PRETEND_UNAVAILABLE_VAR, "1")];
    // failIfUnavailable: every command is refused.
    let strict = sandbox(json!({
        "sandbox": {"failIfUnavailable": true},
        "permissions": {"allow": ["Bash(touch:*)"]}
    }));
    let results = run(&s, &strict, &unavailable, &[cmd("touch made-anyway")]);
    assert!(results[0].contains("unavailable"), "{results:?}");
    assert!(!s.work.join("made-anyway").exists());
    // Otherwise: commands run unsandboxed, through the usual rules (an
    // allow rule here), and nothing is auto-allowed on the sandbox's
    // account.
    let lenient = sandbox(json!({"permissions": {"allow": ["Bash(touch:*)"]}}));
    let results = run(
        &s,
        &lenient,
        &unavailable,
        &[cmd("touch made-by-rule"), cmd("rm notes.txt")],
    );
    assert!(s.work.join("made-by-rule").exists(), "{results:?}");
    assert!(results[1].contains("approval"), "{results:?}");
    assert!(s.work.join("notes.txt").exists());
    // The read-only floor: read-only commands ask instead of running
    // unasked, unless the user accepts the classifier alone.
    let results = run(&s, &json!({}), &unavailable, &[cmd("cat notes.txt")]);
    assert!(
        results[0].contains("OS sandbox") && results[0].contains("unavailable"),
        "{results:?}"
    );
    let mut waived = unavailable.to_vec();
    waived.push((baton_engine::confine::WAIVE_VAR, "1"));
    let results = run(&s, &json!({}), &waived, &[cmd("cat notes.txt")]);
    assert!(results[0].contains("notes"), "{results:?}");
}

/// A name resolving (through `/etc/hosts`) to an HTTP server in a network
/// namespace of its own, so that the proxy's address filter (which refuses
/// loopback and the host's own addresses) has a real, foreign address to
/// allow. Needs root and iproute2; skipped otherwise.
struct ForeignServer {
    ns: String,
    host_veth: String,
    hosts_line: String,
    server: std::process::Child,
}

impl ForeignServer {
    fn start(name: &str, port: u16) -> Option<ForeignServer> {
        let root = nix_is_root();
        if !root || !Path::new("/usr/sbin/ip").exists() && !Path::new("/sbin/ip").exists() {
            eprintln!("skipping the per-domain test: needs root and iproute2");
            return None;
        }
        let id = std::process::id() % 200 + 20;
        let ns = format!("batontest{id}");
        let host_veth = format!("bth{id}");
        let peer = format!("btp{id}");
        let sh = |c: &str| {
            Command::new("sh")
                .arg("-c")
                .arg(c)
                .status()
                .map(|s| s.success())
                .unwrap_or(false)
        };
        let _ = sh(&format!(
            "ip netns del {ns} 2>/dev/null; ip link del {host_veth} 2>/dev/null"
        ));
        let ok = sh(&format!(
            "ip netns add {ns} && ip link add {host_veth} type veth peer name {peer} && \
             ip link set {peer} netns {ns} && ip addr add 10.231.{id}.1/24 dev {host_veth} && \
             ip link set {host_veth} up && ip netns exec {ns} ip addr add 10.231.{id}.2/24 dev {peer} && \
             ip netns exec {ns} ip link set {peer} up && ip netns exec {ns} ip link set lo up"
        ));
        if !ok {
            eprintln!("skipping the per-domain test: could not create a network namespace");
            let _ = sh(&format!(
                "ip netns del {ns} 2>/dev/null; ip link del {host_veth} 2>/dev/null"
            ));
            return None;
        }
        let server = Command::new("ip")
            .args([
                "netns",
                "exec",
                &ns,
                "python3",
                "-m",
                "http.server",
                "--bind",
            ])
            .arg(format!("10.231.{id}.2"))
            .arg(port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .ok()?;
        let hosts_line = format!("10.231.{id}.2 {name}");
        let hosts = std::fs::read_to_string("/etc/hosts").unwrap_or_default();
        std::fs::write("/etc/hosts", format!("{hosts}\n{hosts_line}\n")).ok()?;
        // Wait for the server.
        for _ in 0..50 {
            if sh(&format!("ip netns exec {ns} python3 -c \"import socket; socket.create_connection(('10.231.{id}.2', {port}), 1)\" 2>/dev/null")) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        Some(ForeignServer {
            ns,
            host_veth,
            hosts_line,
            server,
        })
    }
}

impl Drop for ForeignServer {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
        if let Ok(hosts) = std::fs::read_to_string("/etc/hosts") {
            let kept: Vec<&str> = hosts.lines().filter(|l| *l != self.hosts_line).collect();
            let _ = std::fs::write("/etc/hosts", kept.join("\n") + "\n");
        }
        let _ = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "ip netns del {} 2>/dev/null; ip link del {} 2>/dev/null",
                self.ns, self.host_veth
            ))
            .status();
    }
}

fn nix_is_root() -> bool {
    // SAFETY: a plain getter.
    unsafe { libc::geteuid() == 0 }
}

#[test]
fn allowed_domains_are_reached_through_the_proxy_and_nothing_else() {
    if !confinable() {
        return;
    }
    let Some(_server) = ForeignServer::start("allowed.baton.test", 8089) else {
        return;
    };
    let s = scene();
    std::fs::write(s.root.join("served.txt"), "").ok();
    let settings =
        sandbox(json!({"sandbox": {"network": {"allowedDomains": ["allowed.baton.test"]}}}));
    let results = run(
        &s,
        &settings,
        &[],
        &[
            cmd("curl -sS -m 10 -o /dev/null -w 'CODE=%{http_code}' http://allowed.baton.test:8089/"),
            cmd("curl -sS -m 10 -o /dev/null -w 'CODE=%{http_code}' http://other.baton.test:8089/"),
            cmd("curl -sS -m 10 --noproxy '*' -o /dev/null -w 'CODE=%{http_code}' http://allowed.baton.test:8089/"),
            cmd("curl -sS -m 10 -o /dev/null -w 'CODE=%{http_code}' --socks5-hostname 127.0.0.1:1080 http://allowed.baton.test:8089/"),
        ],
    );
    assert!(
        results[0].contains("CODE=200"),
        "through the proxy: {results:?}"
    );
    assert!(
        results[1].contains("CODE=403"),
        "another name is refused: {results:?}"
    );
    assert!(
        !results[2].contains("CODE=200"),
        "around the proxy: {results:?}"
    );
    assert!(
        results[3].contains("CODE=200"),
        "through SOCKS: {results:?}"
    );
}

/// Many sandboxed shells starting at once (descriptor numbers climb past
/// the wrapper's report descriptor, 100): every one starts and succeeds.
#[test]
fn many_sandboxed_commands_start_at_once() {
    if !confinable() {
        return;
    }
    let s = scene();
    let state = tempfile::tempdir().expect("state dir");
    let calls: Vec<Value> = (0..96)
        .map(|i| json!({"command": format!("echo started-{i}")}))
        .collect();
    // Vouched for by a rule, so the settings' sandbox (a new one per
    // command) applies, and read-only, so they run together.
    let settings = sandbox(json!({"permissions": {"allow": ["Bash(echo:*)"]}}));
    let results = baton_run::bash_calls(
        &s.work,
        state.path(),
        Some(&settings),
        &[("BATON_MAX_TOOL_CONCURRENCY", "96")],
        &calls,
    );
    for (i, (text, error)) in results.iter().enumerate() {
        assert!(
            !error && text.contains(&format!("started-{i}")),
            "{i}: {text}"
        );
    }
}

/// `baton run` warns at start, like `Engine::configured`, when the sandbox
/// settings are enabled but the kernel cannot confine (docs/sandbox.md).
#[test]
fn baton_run_warns_when_the_enabled_sandbox_is_unavailable() {
    let s = scene();
    let state = tempfile::tempdir().expect("state dir");
    let settings = state.path().join("settings.json");
    std::fs::write(&settings, sandbox(json!({})).to_string()).expect("settings");
    let message = state.path().join("message.json");
    let call =
        json!({"type": "tool_use", "id": "c0", "name": "Bash", "input": {"command": "echo hi"}});
    std::fs::write(
        &message,
        json!({"role": "assistant", "content": [call]}).to_string(),
    )
    .expect("message");
    let run = |unavailable: bool| {
        let mut cmd = crate::support::baton();
        cmd.args(["run", "--cwd"])
            .arg(&s.work)
            .arg("--state-dir")
            .arg(state.path())
            .arg("--settings")
            .arg(&settings)
            .arg(&message)
            .env("HOME", state.path())
            .env_remove(baton_engine::confine::WAIVE_VAR)
            .env_remove(baton_engine::sandbox::PRETEND_UNAVAILABLE_VAR);
        if unavailable {
            cmd.env(baton_engine::sandbox::PRETEND_UNAVAILABLE_VAR, "1");
        }
        let out = cmd.output().expect("baton runs");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let stderr = run(true);
    assert!(
        stderr.contains("the sandbox settings are enabled but the sandbox is unavailable here"),
        "{stderr}"
    );
    assert!(stderr.contains("the OS sandbox is unavailable"), "{stderr}");
    if confinable() {
        let stderr = run(false);
        assert!(!stderr.contains("unavailable"), "{stderr}");
    }
}
