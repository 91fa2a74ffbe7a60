//! Every kind of task ends with `baton serve`, under SIGTERM, SIGHUP and
//! SIGKILL: a background shell, a plain and a PTY interactive session, and
//! a monitor, all running; afterwards no process of theirs is left.

use std::time::Duration;

use baton_test_support::procs::{self, sleeping};
use baton_test_support::serve::Serve;
use serde_json::json;

use crate::support::BATON;

/// How long a process may take to start or to go.
const PATIENCE: Duration = Duration::from_secs(20);

fn call(id: &str, name: &str, input: serde_json::Value) -> serde_json::Value {
    json!({"type": "tool_use", "id": id, "name": name, "input": input})
}

#[test]
fn tasks_of_every_kind_end_with_baton_whatever_the_signal() {
    for sig in ["-TERM", "-HUP", "-KILL"] {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Serve::start(
            BATON,
            &[
                "--cwd",
                dir.path().to_str().unwrap(),
                "--permission-mode",
                "bypassPermissions",
            ],
        );
        let base = procs::marker("1000.");
        let m = |k: u32| format!("{base}{k}");
        s.send(json!({"type": "message", "message": {"role": "assistant", "content": [
            call("a", "Bash", json!({"command": format!("sleep {}", m(1)), "run_in_background": true})),
            call("b", "exec_command", json!({"cmd": format!("sleep {}", m(2)), "yield_time_ms": 250})),
            call("c", "exec_command", json!({"cmd": format!("sleep {}", m(3)), "tty": true, "yield_time_ms": 250})),
            call("d", "Monitor", json!({"description": "wait", "command": format!("sleep {}", m(4))})),
        ]}}));
        let lines = s.until("done");
        let results: Vec<_> = lines.iter().filter(|l| l["type"] == "result").collect();
        assert_eq!(results.len(), 4);
        for r in &results {
            assert_eq!(r["outcome"]["kind"], "success", "{r}");
        }
        assert!(
            procs::eventually(PATIENCE, || sleeping(&base) == 4),
            "{sig}: {} running",
            sleeping(&base)
        );
        let status = std::process::Command::new("kill")
            .args([sig, &s.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let _ = s.child.wait();
        assert!(
            procs::eventually(PATIENCE, || sleeping(&base) == 0),
            "{sig}: {} left running",
            sleeping(&base)
        );
    }
}
