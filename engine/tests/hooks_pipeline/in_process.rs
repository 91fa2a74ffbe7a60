//! In-process hooks (an embedder's closures) go through the same stage and
//! obey the same precedence as command hooks.

use std::sync::Arc;

use baton_engine::hooks::FnHook;
use baton_engine::{HookEvent, HookOutcome, Outcome};
use serde_json::json;

use super::{ran, Env};

fn on_bash(event: HookEvent, tool: &str) -> bool {
    event == HookEvent::PreToolUse && tool == "Bash"
}

#[tokio::test]
async fn closures_deny_allow_and_rewrite() {
    let env = Env::new();
    let settings = env.settings(json!({"permissions": {"deny": ["Bash(rm:*)"]}}));
    let hook = FnHook::new(on_bash, |input: baton_engine::HookInput| async move {
        let cmd = input.tool_input["command"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if cmd.starts_with("shutdown") {
            HookOutcome::deny("no shutdowns from the agent")
        } else if cmd.starts_with("sudo ") {
            HookOutcome {
                updated_input: Some(json!({"command": cmd.trim_start_matches("sudo ")})),
                ..HookOutcome::allow()
            }
        } else {
            HookOutcome::allow()
        }
    });
    let p = env.pipeline(&settings);
    let p = p.clone().with_hooks(p.hooks().with(Arc::new(hook)));

    let r = env
        .call(&settings, &p, "Bash", json!({"command": "shutdown now"}))
        .await;
    assert_eq!(r.outcome, Outcome::Denied);
    assert!(r.text().contains("no shutdowns"), "{}", r.text());

    // The closure's allow waives the default ask...
    let r = env
        .call(&settings, &p, "Bash", json!({"command": "make"}))
        .await;
    assert!(ran(&r), "{}", r.text());
    // ...but not a deny rule.
    let r = env
        .call(&settings, &p, "Bash", json!({"command": "rm -rf x"}))
        .await;
    assert_eq!(r.outcome, Outcome::Denied);
    assert!(r.text().contains("Bash(rm:*)"), "{}", r.text());
    // A rewrite is what runs (and what the rules see).
    let r = env
        .call(
            &settings,
            &p,
            "Bash",
            json!({"command": "sudo make install"}),
        )
        .await;
    assert_eq!(r.text(), "ran: make install");
    let r = env
        .call(&settings, &p, "Bash", json!({"command": "sudo rm -rf /"}))
        .await;
    assert_eq!(r.outcome, Outcome::Denied);
}

#[tokio::test]
async fn a_panicking_closure_is_a_non_blocking_error() {
    let env = Env::new();
    let settings = env.settings(json!({"permissions": {"allow": ["Bash"]}}));
    let hook = FnHook::new(on_bash, |_input: baton_engine::HookInput| async move {
        if std::hint::black_box(true) {
            panic!("embedder bug");
        }
        HookOutcome::default()
    });
    let p = env.pipeline(&settings);
    let p = p.clone().with_hooks(p.hooks().with(Arc::new(hook)));
    let r = env
        .call(&settings, &p, "Bash", json!({"command": "ls"}))
        .await;
    assert!(ran(&r));
    assert_eq!(r.diagnostics.len(), 1, "{:?}", r.diagnostics);
}

/// The host's model, for prompt and agent hooks from settings files: says
/// no to `rm`, and records what it was asked.
struct Model(std::sync::Mutex<Vec<(baton_engine::hooks::ModelHookKind, String)>>);

#[baton_engine::async_trait]
impl baton_engine::hooks::ModelHookRunner for Model {
    async fn evaluate(
        &self,
        request: baton_engine::hooks::ModelHookRequest,
    ) -> Result<serde_json::Value, String> {
        self.0
            .lock()
            .unwrap()
            .push((request.kind, request.prompt.clone()));
        let command = request.input.tool_input["command"].as_str().unwrap_or("");
        Ok(if command.contains("rm") {
            json!({"ok": false, "reason": "the model says no"})
        } else {
            json!({"ok": true})
        })
    }
}

#[tokio::test]
async fn prompt_hooks_ask_the_hosts_model_and_fail_visibly_without_one() {
    let env = Env::new();
    let settings = env.settings(json!({
        "permissions": {"allow": ["Bash"]},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "prompt", "prompt": "Judge: $ARGUMENTS"}]}]}
    }));
    let p = env.pipeline(&settings);
    // No model yet: a diagnostic naming the hook, and the call goes on.
    let r = env
        .call(&settings, &p, "Bash", json!({"command": "echo hi"}))
        .await;
    assert!(ran(&r), "{}", r.text());
    assert!(
        r.diagnostics.iter().any(|d| d.contains("needs a model")),
        "{:?}",
        r.diagnostics
    );
    let model = Arc::new(Model(Default::default()));
    settings.model_hooks.set(model.clone());
    let r = env
        .call(&settings, &p, "Bash", json!({"command": "rm -rf x"}))
        .await;
    assert_eq!(r.outcome, Outcome::Denied);
    assert!(r.text().contains("the model says no"), "{}", r.text());
    let r = env
        .call(&settings, &p, "Bash", json!({"command": "echo hi"}))
        .await;
    assert!(ran(&r) && r.diagnostics.is_empty(), "{:?}", r.diagnostics);
    let asked = model.0.lock().unwrap().clone();
    assert_eq!(asked.len(), 2);
    assert!(asked[0].1.starts_with("Judge: {") && asked[0].1.contains("rm -rf x"));
}
