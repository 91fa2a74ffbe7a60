//! Structured facts beside the model's block (issue 24): `details` in serve
//! `result` lines, in `baton run --events`, and on `CallResult`.

use baton_test_support::serve::Serve;
use serde_json::{json, Value};

use crate::support::BATON;

fn results(lines: &[Value]) -> Vec<&Value> {
    lines.iter().filter(|l| l["type"] == "result").collect()
}

#[test]
fn serve_results_carry_duration_files_written_and_the_spill_file() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().canonicalize().unwrap();
    let state = cwd.join("state");
    let mut s = Serve::start(
        BATON,
        &[
            "--cwd",
            cwd.to_str().unwrap(),
            "--state-dir",
            state.to_str().unwrap(),
            "--permission-mode",
            "bypassPermissions",
        ],
    );
    let target = cwd.join("out.txt");
    // Bash bounds its own output; eight large outputs together pass the
    // per-message budget, so the largest are spilled to files.
    let mut calls = vec![json!({"type": "tool_use", "id": "w", "name": "Write",
        "input": {"file_path": target, "content": "hello\n"}})];
    for i in 0..8 {
        calls.push(
            json!({"type": "tool_use", "id": format!("big{i}"), "name": "Bash",
            "input": {"command": "head -c 29000 /dev/zero | tr '\\0' x"}}),
        );
    }
    s.send(json!({"type": "message", "message": {"role": "assistant", "content": calls}}));
    let lines = s.until("done");
    let r = results(&lines);
    assert_eq!(r.len(), 9, "{lines:?}");
    assert_eq!(r[0]["outcome"]["kind"], "success", "{}", r[0]);
    assert_eq!(
        r[0]["details"]["files_written"],
        json!([target]),
        "{}",
        r[0]
    );
    assert!(r[0]["details"]["duration_ms"].is_u64(), "{}", r[0]);
    // The block the model reads is what it was: no details inside.
    assert!(!r[0]["block"].to_string().contains("files_written"));
    let spilled: Vec<&str> = r[1..]
        .iter()
        .filter_map(|l| l["details"]["spilled"].as_str())
        .collect();
    assert!(!spilled.is_empty(), "nothing spilled");
    for file in spilled {
        let kept = std::fs::read_to_string(file).unwrap();
        assert!(
            kept.matches('x').count() >= 29_000,
            "{file}: {}",
            kept.len()
        );
    }
    assert!(r[1]["details"].get("files_written").is_none(), "{}", r[1]);
    s.finish();
}

#[test]
fn run_events_and_call_results_carry_details() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().canonicalize().unwrap();
    let message = cwd.join("m.json");
    let target = cwd.join("a.txt");
    std::fs::write(
        &message,
        json!({"role": "assistant", "content": [{"type": "tool_use", "id": "w", "name": "Write",
            "input": {"file_path": target, "content": "x"}}]})
        .to_string(),
    )
    .unwrap();
    let out = crate::support::baton()
        .args([
            "run",
            "--events",
            "--permission-mode",
            "bypassPermissions",
            "--cwd",
        ])
        .arg(&cwd)
        .arg("--state-dir")
        .arg(cwd.join("state"))
        .arg(&message)
        .env("HOME", &cwd)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let result: Value = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|l| l["type"] == "result")
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(
        result["details"]["files_written"],
        json!([target]),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_library_result_has_the_same_details() {
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
    let target = cwd.join("lib.txt");
    batch
        .add(baton::ToolUse::new(
            "w",
            "Write",
            json!({"file_path": target, "content": "x"}),
        ))
        .unwrap();
    let (results, _) = batch.finish().await;
    assert_eq!(results[0].details.files_written, vec![target]);
    assert!(results[0].details.duration_ms.is_some());
    assert!(results[0].details.spilled.is_none());
}
