//! A sandboxed command cannot read Baton's own `/proc` entries: the
//! variables `credentials.envVars` hides from the command are still in
//! Baton's environment, and Baton's descriptors lead to its files. Through
//! `baton run` with the `sandbox` settings, as a model would try it.

use serde_json::{json, Value};

use crate::support::baton_run;

const TOKEN: &str = "HIDDEN-TOKEN-MARKER";

use baton_run::confinable;

fn settings() -> Value {
    json!({"sandbox": {
        "enabled": true,
        "autoAllowBashIfSandboxed": true,
        "credentials": {"envVars": [{"name": "BATON_TEST_TOKEN", "mode": "deny"}]},
    }})
}

#[test]
fn a_sandboxed_command_cannot_read_batons_environment_or_descriptors() {
    if !confinable() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let work = dir.path().canonicalize().expect("canonical").join("work");
    std::fs::create_dir_all(&work).expect("mkdir");
    let state = tempfile::tempdir().expect("state dir");
    // The shell's parent is Baton.
    let calls = [
        json!({"command": "cat /proc/$PPID/comm"}),
        json!({"command": "printenv BATON_TEST_TOKEN || echo NOT-SET"}),
        json!({"command": "tr '\\0' '\\n' < /proc/$PPID/environ; echo END"}),
        json!({"command": "ls -l /proc/$PPID/fd/ 2>&1 | grep -c -- '->'; echo END"}),
        json!({"command": "for f in /proc/$PPID/fd/*; do head -c 100 \"$f\" </dev/null; done 2>&1; echo END"}),
    ];
    let results = baton_run::bash_calls(
        &work,
        state.path(),
        Some(&settings()),
        &[("BATON_TEST_TOKEN", TOKEN)],
        &calls,
    );
    let texts: Vec<&str> = results.iter().map(|(t, _)| t.as_str()).collect();
    assert!(texts[0].contains("baton"), "the parent is Baton: {texts:?}");
    assert!(texts[1].contains("NOT-SET"), "{texts:?}");
    for text in &texts {
        assert!(!text.contains(TOKEN), "{texts:?}");
    }
    assert!(texts[2].contains("END"), "{texts:?}");
    // No descriptor's target is shown.
    assert!(texts[3].trim_start().starts_with('0'), "{texts:?}");
}
