//! `baton run` from tests: one message of `Bash` calls, as the sandbox
//! tests use it (each call's result text and whether it was an error, in
//! call order).

use std::path::Path;

use serde_json::{json, Value};

/// Runs the calls (`Bash` inputs) in `work`, with `state` as the state
/// directory and home (no user settings from the machine running the
/// tests), the settings file if any, and `env` on top of a confinement-
/// neutral environment.
pub fn bash_calls(
    work: &Path,
    state: &Path,
    settings: Option<&Value>,
    env: &[(&str, &str)],
    inputs: &[Value],
) -> Vec<(String, bool)> {
    let calls: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(i, input)| json!({"type": "tool_use", "id": format!("c{i}"), "name": "Bash", "input": input}))
        .collect();
    let message = state.join("message.json");
    std::fs::write(
        &message,
        json!({"role": "assistant", "content": calls}).to_string(),
    )
    .expect("message");
    let mut cmd = super::baton();
    cmd.args(["run", "--cwd"])
        .arg(work)
        .arg("--state-dir")
        .arg(state)
        .env("HOME", state)
        .env_remove(baton_engine::confine::WAIVE_VAR)
        .env_remove(baton_engine::sandbox::PRETEND_UNAVAILABLE_VAR);
    if let Some(settings) = settings {
        let file = state.join("settings.json");
        std::fs::write(&file, settings.to_string()).expect("settings");
        cmd.arg("--settings").arg(file);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.arg(&message).output().expect("baton runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reply: Value = serde_json::from_slice(&out.stdout).expect("json reply");
    reply["content"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            let text = r["content"]
                .as_array()
                .map(|parts| {
                    parts
                        .iter()
                        .filter_map(|p| p["text"].as_str())
                        .collect::<String>()
                })
                .unwrap_or_default();
            (text, r["is_error"].as_bool().unwrap_or(false))
        })
        .collect()
}

/// Whether the `sandbox` settings can confine here (Landlock, seccomp and
/// the user namespaces its mounts and network need); says so when not.
pub fn confinable() -> bool {
    let support = baton_engine::sandbox::support();
    let ok = support.usable() && support.user_namespaces;
    if !ok {
        eprintln!("skipping: the kernel cannot confine here");
    }
    ok
}
