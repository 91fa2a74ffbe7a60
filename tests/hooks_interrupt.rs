//! A hanging hook of any event never holds an interrupt, a signal or a
//! shutdown (issue 25): each hook here is `sleep` for ten minutes, run by a
//! real `baton serve`; the interrupt (or SIGTERM, or `shutdown`) must give
//! every call exactly one result within seconds and leave no `sleep`
//! running.

use std::path::Path;
use std::time::{Duration, Instant};

use baton_test_support::procs::sleeping;
use baton_test_support::serve::Serve;
use serde_json::{json, Value};

use crate::support::BATON;

/// Generous: the hook sleeps 600 s, the interrupt must not wait for it.
const PROMPT: Duration = Duration::from_secs(20);

/// A `sleep` argument no other test uses: ten minutes and a unique tail.
fn marker() -> String {
    baton_test_support::procs::marker("600.")
}

/// `baton serve` with one hanging hook for `event`, in `mode`. Killed
/// (SIGKILL) when dropped, so a failing test does not leave it behind.
struct Session {
    serve: Option<Serve>,
    marker: String,
}

impl Session {
    fn start(dir: &Path, event: &str, mode: &str) -> Session {
        let marker = marker();
        let hook = json!([{"matcher": "*", "hooks": [
            {"type": "command", "command": format!("sleep {marker}")}
        ]}]);
        let settings = json!({"hooks": {event: hook}});
        let path = dir.join("settings.json");
        std::fs::write(&path, settings.to_string()).unwrap();
        let serve = Serve::start(
            BATON,
            &[
                "--cwd",
                dir.to_str().unwrap(),
                "--settings",
                path.to_str().unwrap(),
                "--permission-mode",
                mode,
            ],
        );
        Session {
            serve: Some(serve),
            marker,
        }
    }

    fn serve(&mut self) -> &mut Serve {
        self.serve.as_mut().unwrap()
    }

    /// Waits until the hook's `sleep` runs.
    fn hook_running(&self) {
        let start = Instant::now();
        while sleeping(&self.marker) == 0 {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "the hook never started"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits (a while) until the hook's `sleep` is gone.
    fn hook_gone(&self) -> usize {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(5) {
            if sleeping(&self.marker) == 0 {
                return 0;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        sleeping(&self.marker)
    }

    fn pid(&mut self) -> u32 {
        self.serve().child.id()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(mut serve) = self.serve.take() {
            let _ = serve.child.kill();
            let _ = serve.child.wait();
        }
    }
}

fn message(calls: Vec<Value>) -> Value {
    json!({"type": "message", "message": {"role": "assistant", "content": calls}})
}

fn bash(id: &str, command: &str) -> Value {
    json!({"type": "tool_use", "id": id, "name": "Bash", "input": {"command": command}})
}

/// The events, each with the message that makes its hook run and the
/// permission mode that gets it there.
fn cases() -> Vec<(&'static str, &'static str, Value)> {
    vec![
        ("PreToolUse", "bypassPermissions", bash("c1", "echo hi")),
        ("PostToolUse", "bypassPermissions", bash("c1", "echo hi")),
        (
            "PostToolUseFailure",
            "bypassPermissions",
            bash("c1", "exit 3"),
        ),
        // Writing a file asks; the hook is asked before the host.
        (
            "PermissionRequest",
            "default",
            bash("c1", "echo hi > out.txt"),
        ),
        // In dontAsk mode what would ask is denied; the hook hears of it.
        (
            "PermissionDenied",
            "dontAsk",
            bash("c1", "echo hi > out.txt"),
        ),
        ("PostToolBatch", "bypassPermissions", bash("c1", "echo hi")),
    ]
}

/// The `result` lines among `lines`.
fn results(lines: &[Value]) -> Vec<&Value> {
    lines.iter().filter(|l| l["type"] == "result").collect()
}

#[test]
fn an_interrupt_ends_a_hanging_hook_of_every_event() {
    for (event, mode, call) in cases() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Session::start(dir.path(), event, mode);
        s.serve().send(message(vec![call]));
        s.hook_running();
        let asked = Instant::now();
        s.serve().send(json!({"type": "interrupt"}));
        let lines = s.serve().until("done");
        let took = asked.elapsed();
        assert!(took < PROMPT, "{event}: the interrupt took {took:?}");
        assert_eq!(results(&lines).len(), 1, "{event}: {lines:?}");
        assert_eq!(s.hook_gone(), 0, "{event}: the hook's sleep still runs");
        eprintln!("{event}: interrupt answered in {took:?}");
        s.serve.take().unwrap().finish();
    }
}

#[test]
fn sigterm_ends_a_hanging_hook_of_every_event() {
    for (event, mode, call) in cases() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Session::start(dir.path(), event, mode);
        s.serve().send(message(vec![call]));
        s.hook_running();
        let asked = Instant::now();
        let pid = s.pid();
        let killed = std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let lines = s.serve().until("done");
        assert_eq!(results(&lines).len(), 1, "{event}: {lines:?}");
        let mut serve = s.serve.take().unwrap();
        let status = wait_exit(&mut serve.child, PROMPT);
        let took = asked.elapsed();
        assert!(status.is_some_and(|s| s.success()), "{event}: {status:?}");
        assert!(took < PROMPT, "{event}: SIGTERM took {took:?}");
        assert_eq!(s.hook_gone(), 0, "{event}: the hook's sleep still runs");
        eprintln!("{event}: SIGTERM answered and exited in {took:?}");
    }
}

#[test]
fn shutdown_waits_for_a_hanging_hook_only_a_short_grace() {
    for (event, mode, call) in cases() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Session::start(dir.path(), event, mode);
        s.serve().send(message(vec![call]));
        s.hook_running();
        let asked = Instant::now();
        s.serve().send(json!({"type": "shutdown"}));
        let lines = s.serve().until("done");
        assert_eq!(results(&lines).len(), 1, "{event}: {lines:?}");
        let mut serve = s.serve.take().unwrap();
        let status = wait_exit(&mut serve.child, PROMPT);
        let took = asked.elapsed();
        assert!(status.is_some_and(|s| s.success()), "{event}: {status:?}");
        assert!(took < PROMPT, "{event}: shutdown took {took:?}");
        assert_eq!(s.hook_gone(), 0, "{event}: the hook's sleep still runs");
        eprintln!("{event}: shutdown done in {took:?}");
    }
}

#[test]
fn sigterm_during_a_hanging_session_start_hook_exits_promptly() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Session::start(dir.path(), "SessionStart", "bypassPermissions");
    s.hook_running();
    let asked = Instant::now();
    let pid = s.pid().to_string();
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = wait_exit(&mut s.serve().child, PROMPT);
    let took = asked.elapsed();
    assert!(status.is_some_and(|s| s.success()), "{status:?}");
    assert!(took < PROMPT, "SIGTERM took {took:?}");
    assert_eq!(s.hook_gone(), 0, "the hook's sleep still runs");
    eprintln!("SessionStart + SIGTERM: exited in {took:?}");
}

fn wait_exit(child: &mut std::process::Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}
