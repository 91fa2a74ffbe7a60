//! Fault injection: random sets of misbehaving and well-behaved hooks on one
//! call. Whatever they do, the call gets exactly the result the protocol
//! predicts, every non-blocking failure is reported once, and no hook
//! process survives.

use baton_engine::Outcome;
use baton_test_support::procs;
use proptest::prelude::*;
use serde_json::json;

use super::{ran, Env};

#[derive(Clone, Copy, Debug)]
enum Behaviour {
    AllowJson,
    DenyJson,
    AskJson,
    Exit2,
    Exit1,
    BadJson,
    HugePlainOutput,
    IgnoresStdin,
    Hangs,
    KillsItself,
    Context,
}
use Behaviour::*;

const ALL: [Behaviour; 11] = [
    AllowJson,
    DenyJson,
    AskJson,
    Exit2,
    Exit1,
    BadJson,
    HugePlainOutput,
    IgnoresStdin,
    Hangs,
    KillsItself,
    Context,
];

impl Behaviour {
    fn script(self, i: usize, marker: &str) -> String {
        let body = match self {
            AllowJson => "cat >/dev/null; echo '{\"hookSpecificOutput\": {\"permissionDecision\": \"allow\"}}'".to_string(),
            DenyJson => format!("cat >/dev/null; echo '{{\"hookSpecificOutput\": {{\"permissionDecision\": \"deny\", \"permissionDecisionReason\": \"deny-{i}\"}}}}'"),
            AskJson => "cat >/dev/null; echo '{\"hookSpecificOutput\": {\"permissionDecision\": \"ask\", \"permissionDecisionReason\": \"ask\"}}'".to_string(),
            Exit2 => format!("cat >/dev/null; echo exit2-{i} >&2; exit 2"),
            Exit1 => "cat >/dev/null; echo broken >&2; exit 1".to_string(),
            BadJson => "cat >/dev/null; echo '{\"decision\": '".to_string(),
            HugePlainOutput => "cat >/dev/null; head -c 3000000 /dev/zero | tr '\\0' x".to_string(),
            IgnoresStdin => "exit 0".to_string(),
            Hangs => format!("bash -c 'sleep 60; true' {marker} & sleep 60"),
            KillsItself => "cat >/dev/null; kill -9 $$".to_string(),
            Context => format!("cat >/dev/null; echo '{{\"hookSpecificOutput\": {{\"additionalContext\": \"context-{i}\"}}}}'"),
        };
        format!("#!/bin/bash\n{body}\n")
    }

    fn is_failure(self) -> bool {
        matches!(self, Exit1 | BadJson | Hangs | KillsItself)
    }
}

fn run_case(behaviours: &[Behaviour], case: usize) {
    let env = Env::new();
    let marker = procs::marker(&format!("baton-random-hook-{case}-"));
    let mut hooks = Vec::new();
    for (i, b) in behaviours.iter().enumerate() {
        let path = env.script(&format!("h{i}.sh"), &b.script(i, &marker));
        hooks.push(json!({"type": "command", "command": super::quote(&path), "timeout": 1}));
    }
    let settings = env.settings(json!({
        "permissions": {"allow": ["Bash"]},
        "hooks": {"PreToolUse": [{"matcher": "*", "hooks": hooks}]}
    }));
    let p = env.pipeline(&settings);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let r = rt.block_on(env.call(&settings, &p, "Bash", json!({"command": "ls"})));

    let denied_by = behaviours
        .iter()
        .enumerate()
        .find(|(_, b)| matches!(b, DenyJson | Exit2));
    let asks = behaviours.iter().any(|b| matches!(b, AskJson));
    let text = r.text();
    if let Some((i, b)) = denied_by {
        assert_eq!(r.outcome, Outcome::Denied, "{behaviours:?}: {text}");
        let reason = if matches!(b, DenyJson) {
            format!("deny-{i}")
        } else {
            format!("exit2-{i}")
        };
        assert!(
            text.contains(&reason)
                || behaviours
                    .iter()
                    .filter(|b| matches!(b, DenyJson | Exit2))
                    .count()
                    > 1,
            "{behaviours:?}: {text}"
        );
    } else if asks {
        assert_eq!(r.outcome, Outcome::Denied, "{behaviours:?}: {text}");
        assert!(text.contains("approval"), "{behaviours:?}: {text}");
    } else {
        assert!(ran(&r), "{behaviours:?}: {text}");
        assert!(text.starts_with("ran: ls"), "{behaviours:?}: {text}");
    }
    let failures = behaviours.iter().filter(|b| b.is_failure()).count();
    assert_eq!(
        r.diagnostics.len(),
        failures,
        "{behaviours:?}: {:?}",
        r.diagnostics
    );
    for (i, b) in behaviours.iter().enumerate() {
        if matches!(b, Context) {
            assert!(
                text.contains(&format!("context-{i}")),
                "{behaviours:?}: {text}"
            );
        }
    }
    drop(rt);
    if behaviours.iter().any(|b| matches!(b, Hangs)) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
        while !procs::pids_with(&marker).is_empty() {
            assert!(
                std::time::Instant::now() < deadline,
                "hook processes survived: {behaviours:?}"
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_hook_sets_follow_the_protocol(
        behaviours in prop::collection::vec(prop::sample::select(&ALL[..]), 1..5),
        case in any::<u32>(),
    ) {
        run_case(&behaviours, case as usize);
    }
}
