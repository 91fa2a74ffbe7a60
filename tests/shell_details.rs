//! Shell facts beside the model's block (issue 24): the exit code, stdout
//! and stderr apart and bounded, `timed_out` and `interrupted`, in serve
//! `result` lines, `baton run --events` and `CallResult`, from real bash.

use baton_test_support::serve::Serve;
use serde_json::{json, Value};

use crate::support::BATON;

fn bash(id: &str, command: &str) -> Value {
    json!({"type": "tool_use", "id": id, "name": "Bash", "input": {"command": command}})
}

/// A session whose Bash reads stderr apart (`BATON_BASH_SEPARATE_STDERR`).
fn start(cwd: &std::path::Path) -> Serve {
    start_with(cwd, &[("BATON_BASH_SEPARATE_STDERR", "1")])
}

fn start_with(cwd: &std::path::Path, env: &[(&str, &str)]) -> Serve {
    Serve::start_with_env(
        BATON,
        &[
            "--cwd",
            cwd.to_str().unwrap(),
            "--state-dir",
            cwd.join("state").to_str().unwrap(),
            "--permission-mode",
            "bypassPermissions",
            // Each call's facts on their own: a failing command must not stop
            // the others.
            "--sibling-policy",
            "off",
        ],
        env,
    )
}

#[test]
fn serve_results_carry_exit_code_and_both_streams_apart() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().canonicalize().unwrap();
    let mut s = start(&cwd);
    let calls = vec![
        bash("mixed", "echo to-out; echo to-err >&2; exit 3"),
        bash("err", "echo only-err >&2"),
        bash("huge", "head -c 200000 /dev/zero | tr '\\0' y; echo END"),
    ];
    s.send(json!({"type": "message", "message": {"role": "assistant", "content": calls}}));
    let lines = s.until("done");
    let r: Vec<&Value> = lines.iter().filter(|l| l["type"] == "result").collect();
    assert_eq!(r.len(), 3, "{lines:?}");

    let d = &r[0]["details"];
    assert_eq!(d["exit_code"], 3, "{}", r[0]);
    assert_eq!(d["stdout"]["text"], "to-out\n", "{d}");
    assert_eq!(d["stderr"]["text"], "to-err\n", "{d}");
    assert_eq!(d["stdout"]["truncated"], false, "{d}");
    assert!(d.get("timed_out").is_none() && d.get("interrupted").is_none());
    // The model's block still has both streams in one text, and no facts.
    let block = r[0]["block"].to_string();
    assert!(
        block.contains("to-out") && block.contains("to-err"),
        "{block}"
    );
    assert!(!block.contains("exit_code") && !block.contains("truncated"));

    let d = &r[1]["details"];
    assert_eq!(d["exit_code"], 0, "{}", r[1]);
    assert_eq!(d["stdout"]["text"], "", "{d}");
    assert_eq!(d["stdout"]["total_bytes"], 0, "{d}");
    assert_eq!(d["stderr"]["text"], "only-err\n", "{d}");

    let d = &r[2]["details"];
    assert_eq!(d["exit_code"], 0, "{}", r[2]);
    assert_eq!(d["stdout"]["truncated"], true, "{d}");
    assert_eq!(d["stdout"]["total_bytes"], 200_004, "{d}");
    let text = d["stdout"]["text"].as_str().unwrap();
    assert_eq!(text.len(), 32 * 1024, "a 32 KiB tail");
    assert!(
        text.ends_with("yyyy\nEND\n") || text.ends_with("yEND\n"),
        "{}",
        &text[text.len() - 20..]
    );
    assert_eq!(d["stderr"]["total_bytes"], 0, "{d}");
    s.finish();
}

#[test]
fn by_default_stdout_holds_both_streams_in_the_order_written() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().canonicalize().unwrap();
    let mut s = start_with(&cwd, &[]);
    s.send(json!({"type": "message", "message": {"role": "assistant",
        "content": [bash("m", "echo one; echo two >&2; echo three; exit 3")]}}));
    let lines = s.until("done");
    let r = lines.iter().find(|l| l["type"] == "result").unwrap();
    let d = &r["details"];
    assert_eq!(d["exit_code"], 3, "{r}");
    assert_eq!(d["stdout"]["text"], "one\ntwo\nthree\n", "{r}");
    assert!(d.get("stderr").is_none(), "not told apart: {r}");
    s.finish();
}

#[test]
fn an_interrupted_command_says_so_and_keeps_its_output() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().canonicalize().unwrap();
    let mut s = start(&cwd);
    s.send(json!({"type": "message", "message": {"role": "assistant",
        "content": [bash("slow", "echo before; sleep 60")]}}));
    // Started, and (generously) past its first line, before stopping.
    s.next_of("call_started");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    s.send(json!({"type": "interrupt", "kind": "cancel"}));
    let lines = s.until("done");
    let r = lines.iter().find(|l| l["type"] == "result").unwrap();
    assert_eq!(r["outcome"]["kind"], "cancelled", "{r}");
    let d = &r["details"];
    assert_eq!(d["interrupted"], true, "{r}");
    assert!(d["exit_code"].is_null(), "{r}");
    assert_eq!(d["stdout"]["text"], "before\n", "{r}");
    s.finish();
}

#[test]
fn run_events_report_a_command_that_timed_out() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().canonicalize().unwrap();
    let message = cwd.join("m.json");
    std::fs::write(
        &message,
        json!({"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Bash",
            "input": {"command": "echo started; sleep 60", "timeout": 1000}}]})
        .to_string(),
    )
    .unwrap();
    let out = crate::support::baton()
        .args(["run", "--events", "--permission-mode", "bypassPermissions"])
        .arg("--cwd")
        .arg(&cwd)
        .arg("--state-dir")
        .arg(cwd.join("state"))
        .arg(&message)
        .env("HOME", &cwd)
        // Stop at the time limit instead of moving to the background.
        .env("BATON_BASH_TIMEOUT_KILLS", "1")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let result: Value = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|l| l["type"] == "result")
        .unwrap_or_else(|| panic!("{text}"));
    let d = &result["details"];
    assert_eq!(d["timed_out"], true, "{result}");
    assert!(d["exit_code"].is_null(), "{result}");
    assert_eq!(d["stdout"]["text"], "started\n", "{result}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_library_result_has_the_shell_details() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().canonicalize().unwrap();
    let engine = baton::Engine::builder(
        baton::BuiltinConfig::default()
            .pool(&baton::engine::AllowAllUnsafe)
            .unwrap(),
    )
    .cwd(&cwd)
    .state_dir(cwd.join("state"))
    .allow_all_unsafe()
    .build()
    .unwrap();
    let batch = engine.open_batch().await.unwrap();
    batch
        .add(baton::ToolUse::new(
            "b",
            "Bash",
            json!({"command": "printf 'a\\n'; printf 'b\\n' >&2; exit 7"}),
        ))
        .unwrap();
    let (results, _) = batch.finish().await;
    let shell = results[0].details.shell.as_ref().expect("shell details");
    assert_eq!(shell.exit_code, Some(7));
    // One pipe by default: stderr is in stdout, in order.
    assert_eq!(
        shell.stdout.as_ref().map(|s| s.text.as_str()),
        Some("a\nb\n")
    );
    assert!(shell.stderr.is_none());
    assert!(!shell.timed_out && !shell.interrupted);
}
