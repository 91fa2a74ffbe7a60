//! Each path of the command-hook protocol (SPEC §12), end to end.

use baton_engine::permission::Approval;
use baton_engine::Outcome;
use serde_json::{json, Value};

use super::{approver, hook, quote, ran, Env};

const DENY_RM_BASH: &str = r#"#!/bin/bash
input=$(cat)
if [[ "$input" == *'"rm '* ]]; then
  echo "rm is not allowed here; move files to ./trash instead" >&2
  exit 2
fi
exit 0
"#;

#[tokio::test]
async fn exit_2_denies_with_stderr_as_the_reason() {
    let env = Env::new();
    let script = env.script("deny_rm.sh", DENY_RM_BASH);
    let settings = env.settings(json!({
        "permissions": {"allow": ["Bash"]},
        "hooks": hook("PreToolUse", "Bash", &quote(&script)),
    }));
    let p = env.pipeline(&settings);
    let denied = env
        .call(&settings, &p, "Bash", json!({"command": "rm -rf build"}))
        .await;
    assert_eq!(denied.outcome, Outcome::Denied);
    assert!(denied.is_error);
    assert!(
        denied.text().contains("move files to ./trash instead"),
        "{}",
        denied.text()
    );
    let fine = env
        .call(&settings, &p, "Bash", json!({"command": "ls"}))
        .await;
    assert!(ran(&fine), "{}", fine.text());
    assert_eq!(fine.text(), "ran: ls");
}

const PY_DECIDE: &str = r#"#!/usr/bin/env python3
import json, sys
data = json.load(sys.stdin)
cmd = data["tool_input"].get("command", "")
out = {"hookSpecificOutput": {"hookEventName": "PreToolUse"}}
spec = out["hookSpecificOutput"]
if cmd.startswith("deploy"):
    spec["permissionDecision"] = "deny"
    spec["permissionDecisionReason"] = "deploys go through CI"
elif cmd.startswith("migrate"):
    spec["permissionDecision"] = "ask"
    spec["permissionDecisionReason"] = "migrations touch the shared database"
elif cmd.startswith("make") or cmd.startswith("rm"):
    spec["permissionDecision"] = "allow"
    spec["permissionDecisionReason"] = "the hook trusts this"
elif cmd.startswith("danger"):
    spec["updatedInput"] = {"command": "echo " + cmd[len("danger"):].strip()}
elif cmd.startswith("badrewrite"):
    spec["updatedInput"] = {"command": 5}
elif cmd.startswith("rewrite-to-rm"):
    spec["updatedInput"] = {"command": "rm -rf /"}
    spec["permissionDecision"] = "allow"
elif cmd.startswith("context"):
    spec["additionalContext"] = "Remember: the build cache lives in /tmp/cache."
elif cmd.startswith("stop"):
    out["continue"] = False
    out["stopReason"] = "the hook ended the turn"
print(json.dumps(out))
"#;

fn py_settings(env: &Env, permissions: Value) -> baton_engine::settings::Settings {
    let script = env.script("decide.py", PY_DECIDE);
    env.settings(json!({
        "permissions": permissions,
        "hooks": hook("PreToolUse", "Bash", &format!("python3 {}", quote(&script))),
    }))
}

#[tokio::test]
async fn json_deny_carries_its_reason() {
    let env = Env::new();
    let settings = py_settings(&env, json!({"allow": ["Bash"]}));
    let p = env.pipeline(&settings);
    let r = env
        .call(&settings, &p, "Bash", json!({"command": "deploy prod"}))
        .await;
    assert_eq!(r.outcome, Outcome::Denied);
    assert!(r.text().contains("deploys go through CI"), "{}", r.text());
}

#[tokio::test]
async fn json_ask_goes_to_the_approver_or_denies_without_one() {
    let env = Env::new();
    let settings = py_settings(&env, json!({"allow": ["Bash"]}));
    let p = env.pipeline(&settings);
    let r = env
        .call(&settings, &p, "Bash", json!({"command": "migrate up"}))
        .await;
    assert_eq!(r.outcome, Outcome::Denied);
    assert!(r.text().contains("approval"), "{}", r.text());
    assert!(r.text().contains("shared database"), "{}", r.text());

    let yes = approver(Approval::Allow);
    let p = env.pipeline(&settings).with_approver(yes.clone());
    let r = env
        .call(&settings, &p, "Bash", json!({"command": "migrate up"}))
        .await;
    assert!(ran(&r), "{}", r.text());
    let asked = yes.asked.lock();
    assert_eq!(asked.len(), 1);
    assert!(asked[0].reason.contains("shared database"));
    assert_eq!(asked[0].tool_name, "Bash");
}

#[tokio::test]
async fn json_allow_does_not_override_deny_or_ask_rules() {
    let env = Env::new();
    let settings = py_settings(
        &env,
        json!({"deny": ["Bash(rm:*)"], "ask": ["Bash(make deploy)"]}),
    );
    let yes = approver(Approval::Allow);
    let p = env.pipeline(&settings);
    let r = env
        .call(&settings, &p, "Bash", json!({"command": "rm -rf x"}))
        .await;
    assert_eq!(r.outcome, Outcome::Denied);
    assert!(r.text().contains("Bash(rm:*)"), "{}", r.text());

    // The ask rule still asks although the hook allowed.
    let p = env.pipeline(&settings).with_approver(yes.clone());
    let r = env
        .call(&settings, &p, "Bash", json!({"command": "make deploy"}))
        .await;
    assert!(ran(&r));
    assert_eq!(yes.asked.lock().len(), 1);

    // Where only the mode's default would ask, the hook's allow suffices.
    let r = env
        .call(&settings, &p, "Bash", json!({"command": "make all"}))
        .await;
    assert!(ran(&r), "{}", r.text());
    assert_eq!(yes.asked.lock().len(), 1);
}

#[tokio::test]
async fn updated_input_rewrites_and_is_checked_again() {
    let env = Env::new();
    let settings = py_settings(
        &env,
        json!({"allow": ["Bash(echo:*)"], "deny": ["Bash(rm:*)"]}),
    );
    let p = env.pipeline(&settings);
    let r = env
        .call(&settings, &p, "Bash", json!({"command": "danger hello"}))
        .await;
    assert!(ran(&r), "{}", r.text());
    assert_eq!(r.text(), "ran: echo hello");

    let r = env
        .call(&settings, &p, "Bash", json!({"command": "badrewrite"}))
        .await;
    assert_eq!(r.outcome, Outcome::InvalidInput);
    assert!(r.text().contains("rewrote"), "{}", r.text());

    // The rewritten command meets the rules, not the original one.
    let r = env
        .call(&settings, &p, "Bash", json!({"command": "rewrite-to-rm"}))
        .await;
    assert_eq!(r.outcome, Outcome::Denied);
    assert!(r.text().contains("Bash(rm:*)"), "{}", r.text());
}

#[tokio::test]
async fn additional_context_and_stop_reach_the_result() {
    let env = Env::new();
    let settings = py_settings(&env, json!({"allow": ["Bash"]}));
    let p = env.pipeline(&settings);
    let r = env
        .call(&settings, &p, "Bash", json!({"command": "context please"}))
        .await;
    assert!(ran(&r));
    assert!(
        r.text().contains("the build cache lives in /tmp/cache"),
        "{}",
        r.text()
    );
    let r = env
        .call(&settings, &p, "Bash", json!({"command": "stop now"}))
        .await;
    assert_eq!(r.stop_turn.as_deref(), Some("the hook ended the turn"));
}

#[tokio::test]
async fn post_tool_use_block_and_exit_2_feed_the_model() {
    let env = Env::new();
    let block = env.script(
        "lint.py",
        r#"#!/usr/bin/env python3
import json, sys
data = json.load(sys.stdin)
assert data["hook_event_name"] == "PostToolUse"
if "ran: make" in json.dumps(data["tool_response"]):
    print(json.dumps({"decision": "block", "reason": "lint failed: 3 warnings in main.rs"}))
"#,
    );
    let exit2 = env.script(
        "post2.sh",
        "#!/bin/bash\ncat >/dev/null\necho 'formatter rewrote 2 files' >&2\nexit 2\n",
    );
    let settings = env.settings(json!({
        "permissions": {"allow": ["Bash", "Edit"]},
        "hooks": {"PostToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": format!("python3 {}", quote(&block))}]},
            {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": quote(&exit2)}]}
        ]}
    }));
    let p = env.pipeline(&settings);
    let r = env
        .call(&settings, &p, "Bash", json!({"command": "make"}))
        .await;
    assert!(ran(&r));
    assert!(r.text().contains("ran: make"));
    assert!(r.text().contains("lint failed: 3 warnings"), "{}", r.text());
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
    let r = env
        .call(&settings, &p, "Edit", json!({"file_path": "a.rs"}))
        .await;
    assert!(
        r.text().contains("formatter rewrote 2 files"),
        "{}",
        r.text()
    );
}

#[tokio::test]
async fn failure_hooks_see_the_error() {
    let env = Env::new();
    let dump = env.project.join("failure.json");
    let settings = env.settings(json!({
        "hooks": hook("PostToolUseFailure", "*", &format!("cat > {}", quote(&dump))),
    }));
    let p = env.pipeline(&settings);
    let r = env.call(&settings, &p, "Fail", json!({})).await;
    assert_eq!(r.outcome, Outcome::ToolError);
    let seen: Value = serde_json::from_str(&std::fs::read_to_string(&dump).unwrap()).unwrap();
    assert_eq!(seen["hook_event_name"], "PostToolUseFailure");
    assert!(seen["error"]
        .as_str()
        .unwrap()
        .contains("failed on purpose"));
    assert!(seen.get("tool_response").is_none());
}

#[tokio::test]
async fn bad_output_and_crashes_are_non_blocking_diagnostics() {
    let env = Env::new();
    let bad_json = env.script(
        "bad.sh",
        "#!/bin/bash\ncat >/dev/null\necho '{\"hookSpecificOutput\": oops'\n",
    );
    let crash = env.script(
        "crash.sh",
        "#!/bin/bash\ncat >/dev/null\necho 'something broke' >&2\nexit 1\n",
    );
    let settings = env.settings(json!({
        "permissions": {"allow": ["Bash"]},
        "hooks": {"PreToolUse": [{"matcher": "", "hooks": [
            {"type": "command", "command": quote(&bad_json)},
            {"type": "command", "command": quote(&crash)}
        ]}]}
    }));
    let p = env.pipeline(&settings);
    let r = env
        .call(&settings, &p, "Bash", json!({"command": "ls"}))
        .await;
    assert!(ran(&r), "{}", r.text());
    assert_eq!(r.diagnostics.len(), 2, "{:?}", r.diagnostics);
    let all = r.diagnostics.join("\n");
    assert!(all.contains("invalid JSON"), "{all}");
    assert!(all.contains("bad.sh"), "{all}");
    assert!(all.contains("exited with status 1"), "{all}");
    assert!(all.contains("something broke"), "{all}");
}

#[tokio::test]
async fn hooks_get_the_documented_input_cwd_and_project_dir() {
    let env = Env::new();
    let out = env.project.join("seen");
    std::fs::create_dir_all(&out).unwrap();
    let script = env.script(
        "record.sh",
        &format!(
            "#!/bin/bash\ncat > {o}/input.json\npwd > {o}/cwd\necho \"$CLAUDE_PROJECT_DIR\" > {o}/project\n",
            o = quote(&out)
        ),
    );
    let settings = env.settings(json!({
        "permissions": {"defaultMode": "acceptEdits", "allow": ["Bash"]},
        "hooks": hook("PreToolUse", "Bash", &quote(&script)),
    }));
    let p = env.pipeline(&settings);
    let r = env
        .call(&settings, &p, "Bash", json!({"command": "ls"}))
        .await;
    assert!(ran(&r));
    let input: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("input.json")).unwrap()).unwrap();
    assert_eq!(input["session_id"], "session-1");
    assert_eq!(
        input["transcript_path"],
        env.state.join("t.jsonl").display().to_string()
    );
    assert_eq!(input["cwd"], env.cwd.display().to_string());
    assert_eq!(input["permission_mode"], "acceptEdits");
    assert_eq!(input["hook_event_name"], "PreToolUse");
    assert_eq!(input["tool_name"], "Bash");
    assert_eq!(input["tool_input"], json!({"command": "ls"}));
    assert_eq!(input["tool_use_id"], "call-1");
    let read = |name: &str| {
        std::fs::read_to_string(out.join(name))
            .unwrap()
            .trim()
            .to_string()
    };
    // The hook runs in the project; `cwd` above says where the session is.
    assert_eq!(read("cwd"), env.project.display().to_string());
    assert_eq!(read("project"), env.project.display().to_string());
}

#[tokio::test]
async fn without_an_approver_the_denial_names_the_rule_that_would_allow() {
    let env = Env::new();
    let settings = env.settings(json!({"permissions": {"ask": ["Bash(git push:*)"]}}));
    let p = env.pipeline(&settings);
    let r = env
        .call(&settings, &p, "Bash", json!({"command": "npm test"}))
        .await;
    assert_eq!(r.outcome, Outcome::Denied);
    assert!(r.text().contains("approval"), "{}", r.text());
    assert!(r.text().contains("`Bash(npm test)`"), "{}", r.text());
    // An ask rule matched: no allow rule could help, so none is suggested.
    let r = env
        .call(&settings, &p, "Bash", json!({"command": "git push"}))
        .await;
    assert_eq!(r.outcome, Outcome::Denied);
    assert!(r.text().contains("Bash(git push:*)"), "{}", r.text());
    assert!(!r.text().contains("permissions.allow"), "{}", r.text());
}
