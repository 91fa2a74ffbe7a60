//! Hook configuration goes through the shared `${VAR}` grammar
//! (`baton_engine::vars`). An HTTP hook's header values: `${NAME:-default}`
//! works as in MCP entries, `$NAME` still works as Claude Code documents for
//! these headers, and a variable outside `allowedEnvVars` is never sent. An
//! exec-form command: only Baton's placeholders are replaced.

use std::io::{Read, Write};
use std::net::TcpListener;

use serde_json::json;

use super::{quote, ran, Env};

/// A server on 127.0.0.1 that answers one request by denying the call,
/// with the request's `x-*` header lines as the reason.
fn header_echo() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let Ok((mut stream, _)) = listener.accept() else {
            return;
        };
        let mut seen = Vec::new();
        let mut chunk = [0u8; 4096];
        while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
            match stream.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => seen.extend_from_slice(&chunk[..n]),
            }
        }
        let head = String::from_utf8_lossy(&seen).into_owned();
        let mut headers: Vec<&str> = head.lines().filter(|l| l.starts_with("x-")).collect();
        headers.sort_unstable();
        let reply = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": headers.join(" | ")}})
        .to_string();
        let _ = write!(
            stream,
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reply}",
            reply.len()
        );
    });
    format!("http://{addr}")
}

#[tokio::test]
async fn header_values_take_defaults_and_only_allowed_variables() {
    let env = Env::new();
    let settings = env.settings(json!({
        "env": {"HOOK_TOKEN": "tok123", "HOOK_SECRET": "leak"},
        "permissions": {"allow": ["Bash"]},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{
            "type": "http", "url": header_echo(), "timeout": 10,
            "headers": {
                "X-Default": "${HOOK_UNSET:-fallback}",
                "X-Set": "Bearer ${HOOK_TOKEN:-none}",
                "X-Bare": "$HOOK_TOKEN",
                "X-Secret": "[${HOOK_SECRET:-withheld}][$HOOK_SECRET]"
            },
            "allowedEnvVars": ["HOOK_TOKEN", "HOOK_UNSET"]
        }]}]}
    }));
    let p = env.pipeline(&settings);
    let r = env
        .call(&settings, &p, "Bash", json!({"command": "ls"}))
        .await;
    assert!(!ran(&r), "the hook's deny must stop the call: {}", r.text());
    assert!(
        r.text().contains(
            "x-bare: tok123 | x-default: fallback | x-secret: [withheld][] | x-set: Bearer tok123"
        ),
        "{}",
        r.text()
    );
}

#[tokio::test]
async fn an_exec_form_hook_gets_only_the_placeholders_replaced() {
    let env = Env::new();
    let seen = env.state.join("argv");
    env.script(
        "argv.sh",
        &format!("#!/bin/bash\nprintf '%s\\n' \"$@\" > {}\n", quote(&seen)),
    );
    let settings = env.settings(json!({
        "permissions": {"allow": ["Bash"]},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{
            "type": "command", "command": "${CLAUDE_PROJECT_DIR}/hooks/argv.sh",
            "args": ["${CLAUDE_PROJECT_DIR}/x", "${OTHER}", "$HOME", "${CLAUDE_PLUGIN_ROOT}",
                     "${NOPE:-d}"]
        }]}]}
    }));
    let p = env.pipeline(&settings);
    let r = env
        .call(&settings, &p, "Bash", json!({"command": "ls"}))
        .await;
    assert!(ran(&r), "{}", r.text());
    let argv = std::fs::read_to_string(&seen).unwrap();
    assert_eq!(
        argv,
        format!(
            "{}/x\n${{OTHER}}\n$HOME\n${{CLAUDE_PLUGIN_ROOT}}\nd\n",
            env.project.display()
        )
    );
}
