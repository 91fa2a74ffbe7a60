//! Prompt and agent hooks answered by a Python host's "model" over
//! `baton serve` (issue 15): `hook_request` out, `hook_answer` in.

use baton_test_support::python_host;
use serde_json::json;

#[test]
fn a_python_host_evaluates_prompt_and_agent_hooks_over_serve() {
    let dir = tempfile::tempdir().unwrap();
    let s = python_host::run(crate::support::BATON, "model_hooks.py", dir.path());
    assert_eq!(s["exit"], 0, "{s}");
    // One prompt hook per call; the agent hook only after calls that ran.
    assert_eq!(
        s["kinds"],
        json!([
            ["agent", "PostToolUse", "leak"],
            ["agent", "PostToolUse", "ok"],
            ["prompt", "PreToolUse", "leak"],
            ["prompt", "PreToolUse", "ok"],
            ["prompt", "PreToolUse", "rm"],
        ]),
        "{s}"
    );
    assert_eq!(s["prompt_ok"], true, "$ARGUMENTS is replaced: {s}");
    assert_eq!(s["models"], json!(["None", "small"]), "{s}");
    assert_eq!(s["outcomes"]["rm"], "denied", "{s}");
    assert!(
        s["rm"]
            .as_str()
            .unwrap()
            .contains("the model says rm is unsafe"),
        "{s}"
    );
    assert_eq!(s["outcomes"]["ok"], "success", "{s}");
    assert!(!s["ok"].as_str().unwrap().contains("leak"), "{s}");
    assert!(
        s["leak"]
            .as_str()
            .unwrap()
            .contains("the output leaks a secret"),
        "{s}"
    );
    // The stale answer after `done` is an error line, not a crash.
    let errors = s["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{s}");
    assert!(errors[0].as_str().unwrap().contains("hook-999"), "{s}");
}
