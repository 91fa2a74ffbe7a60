//! No process outlives `baton run` or `baton serve`, whichever way they
//! end: SIGINT, SIGTERM, SIGHUP (each interrupts, reports, exits), SIGKILL
//! (PDEATHSIG and the orphan sentinel end what is left), and a second
//! SIGINT (exits at once). The command escapes its shell's process group
//! every way a shell can: background jobs, `nohup`, `disown`, `setsid`,
//! `set -m`, `setpgid`, a double fork (issue 9).

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use baton_test_support::procs;
use procs::running;
use serde_json::{json, Value};

use crate::support::baton;

/// Every way out of the shell's group, each process named by `needle`.
fn escaping_command(needle: &str) -> String {
    [
        format!("sleep {needle} &"),
        format!("nohup sleep {needle} >/dev/null 2>&1 &"),
        format!("sleep {needle} & disown;"),
        format!("setsid sleep {needle} &"),
        format!("(setsid sleep {needle} &);"),
        format!("(set -m; sleep {needle} &);"),
        format!(
            "python3 -c 'import os; os.setpgid(0, 0); os.execvp(\"sleep\", [\"sleep\", \"{needle}\"])' &"
        ),
        format!("sleep {needle}; wait"),
    ]
    .join(" ")
}
const PROCESSES: usize = 8;

fn needle() -> String {
    procs::marker("1000.")
}

fn wait_for(what: &str, mut ok: impl FnMut() -> bool, within: Duration) {
    let until = Instant::now() + within;
    while !ok() {
        assert!(Instant::now() < until, "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn kill(pid: u32, sig: &str) {
    let ok = Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
}

/// Starts `how` (`run` or `serve`) on one Bash call running `command`,
/// and waits until `expect` processes named `needle` run.
fn start(
    how: &str,
    dir: &std::path::Path,
    command: &str,
    needle: &str,
    expect: usize,
) -> std::process::Child {
    let call = json!({"type": "tool_use", "id": "t", "name": "Bash",
        "input": {"command": command}});
    let mut child = baton()
        .args([how, "--cwd", dir.to_str().unwrap()])
        .args(["--permission-mode", "bypassPermissions"])
        .args(if how == "run" {
            vec!["--events", "-"]
        } else {
            vec![]
        })
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    if how == "serve" {
        writeln!(stdin, "{}", json!({"type": "add", "tool_use": call})).unwrap();
        stdin.flush().unwrap();
        // Keep stdin open: the session must end on the signal, not on EOF.
        std::mem::forget(stdin);
    } else {
        writeln!(stdin, "{}", json!({"role": "assistant", "content": [call]})).unwrap();
        drop(stdin);
    }
    wait_for(
        &format!("{how}: the command never started its processes"),
        || running(needle) >= expect,
        Duration::from_secs(20),
    );
    child
}

#[test]
fn no_process_outlives_run_or_serve_whatever_signal_ends_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for how in ["run", "serve"] {
        for sig in ["-INT", "-TERM", "-HUP", "-KILL"] {
            let needle = needle();
            let child = start(
                how,
                dir.path(),
                &escaping_command(&needle),
                &needle,
                PROCESSES,
            );
            kill(child.id(), sig);
            let out = child.wait_with_output().unwrap();
            if sig != "-KILL" {
                if !out.status.success() {
                    failures.push(format!("{how} {sig}: exit {:?}", out.status));
                }
                let text = String::from_utf8_lossy(&out.stdout);
                let result = text
                    .lines()
                    .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                    .find(|l| l["type"] == "result");
                match result {
                    Some(r) if r["outcome"]["kind"] == "cancelled" => {}
                    other => failures.push(format!("{how} {sig}: result {other:?}")),
                }
            }
            // SIGKILL leaves the cleanup to the sentinel: give it a moment.
            let until = Instant::now() + Duration::from_secs(5);
            while running(&needle) > 0 && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(20));
            }
            let left = running(&needle);
            if left > 0 {
                failures.push(format!("{how} {sig}: {left} processes left"));
                let _ = Command::new("pkill").args(["-f", &needle]).status();
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_second_sigint_exits_at_once_and_kills_every_tree() {
    let dir = tempfile::tempdir().unwrap();
    for how in ["run", "serve"] {
        let needle = needle();
        // Ignores SIGTERM, so the first stop would take the grace period.
        let command = format!("trap '' TERM; {}", escaping_command(&needle));
        let child = start(how, dir.path(), &command, &needle, PROCESSES);
        kill(child.id(), "-INT");
        std::thread::sleep(Duration::from_millis(100));
        let t0 = Instant::now();
        kill(child.id(), "-INT");
        let out = child.wait_with_output().unwrap();
        assert!(
            t0.elapsed() < Duration::from_secs(3),
            "{how}: {:?}",
            t0.elapsed()
        );
        assert!(
            out.status.code() == Some(130) || out.status.success(),
            "{how}: {:?}",
            out.status
        );
        wait_for(
            &format!("{how}: processes left after the second SIGINT"),
            || running(&needle) == 0,
            Duration::from_secs(3),
        );
    }
}
