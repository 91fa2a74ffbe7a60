//! SEP-1034 in the library: a form field the host's answer leaves out
//! reaches the server with its `default`. The server (servers/handmade.py)
//! returns the raw `elicitation/create` result it received.

use std::sync::Arc;

use baton_mcp::{ElicitResponse, FnElicitor, McpClients, ServerSpec};
use common::*;
use serde_json::{json, Value};

use crate::common;

fn handmade() -> ServerSpec {
    let script = workspace().join("tools/mcp/tests/servers/handmade.py");
    ServerSpec::stdio(
        "hm",
        "python3",
        vec!["-u".into(), script.display().to_string()],
    )
}

/// What the server received when the host answered `answer`.
async fn server_sees(answer: ElicitResponse) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = options(dir.path());
    opts.elicitor = Some(Arc::new(FnElicitor(
        move |_req: baton_mcp::ElicitRequest| {
            let answer = answer.clone();
            async move { answer }
        },
    )));
    let clients = McpClients::start(vec![handmade()], opts).await;
    assert!(
        clients.diagnostics().is_empty(),
        "{:?}",
        clients.diagnostics()
    );
    let (tools, _) = clients.tools();
    let out = call(&tools, "mcp__hm__ask_defaults", json!({}), dir.path())
        .await
        .unwrap();
    clients.shutdown().await;
    serde_json::from_str(&text(&out)).unwrap_or_else(|e| panic!("{e}: {}", text(&out)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_acceptance_carries_every_default() {
    let seen = server_sees(ElicitResponse::Accept(json!({}))).await;
    assert_eq!(seen["action"], "accept");
    assert_eq!(
        seen["content"],
        json!({"name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": true})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn given_answers_win_over_defaults() {
    let seen = server_sees(ElicitResponse::Accept(
        json!({"name": "Ada", "verified": false}),
    ))
    .await;
    assert_eq!(
        seen["content"],
        json!({"name": "Ada", "age": 30, "score": 95.5, "status": "active", "verified": false})
    );
    // Accepting without any content is an empty form, too.
    let seen = server_sees(ElicitResponse::Accept(Value::Null)).await;
    assert_eq!(seen["content"]["name"], "John Doe");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declined_form_carries_nothing() {
    let seen = server_sees(ElicitResponse::Decline).await;
    assert_eq!(seen["action"], "decline");
    assert!(seen.get("content").is_none(), "{seen}");
}
