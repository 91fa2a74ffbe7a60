//! Claude Code's MCP tools beyond calling: ReadMcpResourceDirTool, binary
//! resources saved to a file (`blobSavedTo`), RefreshMcpTools and
//! WaitForMcpServers, against a real server (servers/oversized.py).

use std::time::Duration;

use baton_mcp::ServerSpec;
use common::*;
use serde_json::{json, Value};

use crate::common;

fn json_of(out: &baton_engine::ToolOutput) -> Value {
    serde_json::from_str(&text(out)).unwrap_or_else(|e| panic!("{e}: {}", text(out)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn directories_and_binary_resources() {
    let dir = tempfile::tempdir().unwrap();
    let clients = start(vec![oversized("r")], dir.path()).await;
    let (tools, _) = clients.tools();
    let out = call(
        &tools,
        "ReadMcpResourceDirTool",
        json!({"server": "r", "uri": "dir://root"}),
        dir.path(),
    )
    .await
    .unwrap();
    assert_eq!(
        json_of(&out),
        json!({"resources": [
            {"uri": "dir://root/a.txt", "name": "a.txt", "mimeType": "text/plain"},
            {"uri": "dir://root/logo.png", "name": "logo.png", "mimeType": "image/png"},
            {"uri": "dir://root/sub", "name": "sub", "mimeType": "inode/directory"},
        ]})
    );
    let out = call(
        &tools,
        "ReadMcpResourceDirTool",
        json!({"server": "r", "uri": "dir://root/sub/"}),
        dir.path(),
    )
    .await
    .unwrap();
    let names: Vec<String> = json_of(&out)["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["b.txt", "deep"]);
    let out = call(
        &tools,
        "ReadMcpResourceDirTool",
        json!({"server": "r", "uri": "dir://nowhere"}),
        dir.path(),
    )
    .await
    .unwrap();
    let v = json_of(&out);
    assert_eq!(v["resources"], json!([]));
    assert!(v["error"].as_str().unwrap().contains("no resources under"));

    // A blob is saved under the session's state directory, not inlined.
    let out = call(
        &tools,
        "ReadMcpResourceTool",
        json!({"server": "r", "uri": "dir://root/logo.png"}),
        dir.path(),
    )
    .await
    .unwrap();
    let v = json_of(&out);
    let item = &v["contents"][0];
    assert_eq!(item["uri"], "dir://root/logo.png");
    assert_eq!(item["mimeType"], "image/png");
    assert!(
        item.get("blob").is_none() && item.get("text").is_none(),
        "{v}"
    );
    let saved = item["blobSavedTo"].as_str().unwrap();
    assert!(
        saved.starts_with(&dir.path().join("state").display().to_string()),
        "{saved}"
    );
    assert!(saved.ends_with(".png"), "{saved}");
    let bytes = std::fs::read(saved).unwrap();
    let mut want = vec![0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];
    for _ in 0..4 {
        want.extend(0u8..=255);
    }
    assert_eq!(bytes, want);
    let out = call(
        &tools,
        "ReadMcpResourceTool",
        json!({"server": "r", "uri": "dir://root/a.txt"}),
        dir.path(),
    )
    .await
    .unwrap();
    assert_eq!(
        json_of(&out),
        json!({"contents": [{"uri": "dir://root/a.txt", "mimeType": "text/plain", "text": "text of dir://root/a.txt"}]})
    );
    clients.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refresh_reports_added_and_removed_and_the_pool_follows() {
    let dir = tempfile::tempdir().unwrap();
    let clients = start(vec![oversized("r")], dir.path()).await;
    let (tools, _) = clients.tools();
    assert!(tools.iter().any(|t| t.name() == "mcp__r__gone"));
    // Nothing changed yet.
    let out = call(&tools, "RefreshMcpTools", json!({}), dir.path())
        .await
        .unwrap();
    assert_eq!(
        json_of(&out),
        json!([{"server": "r", "status": "refreshed", "toolCount": 6, "added": [], "removed": []}])
    );
    assert!(
        !clients.refresh().await,
        "an unchanged list must not rebuild the pool"
    );
    // The server changes its tools without telling anyone.
    call(&tools, "mcp__r__toggle", json!({}), dir.path())
        .await
        .unwrap();
    let out = call(
        &tools,
        "RefreshMcpTools",
        json!({"server": "r"}),
        dir.path(),
    )
    .await
    .unwrap();
    assert_eq!(
        json_of(&out),
        json!([{"server": "r", "status": "refreshed", "toolCount": 6,
                "added": ["mcp__r__extra"], "removed": ["mcp__r__gone"]}])
    );
    // The host's refresh between messages picks it up (the pool path of
    // tools/list_changed).
    assert!(clients.refresh().await);
    let (after, _) = clients.tools();
    assert!(!after.iter().any(|t| t.name() == "mcp__r__gone"));
    let out = call(&after, "mcp__r__extra", json!({}), dir.path())
        .await
        .unwrap();
    assert_eq!(text(&out), "extra works");
    let err = call(
        &tools,
        "RefreshMcpTools",
        json!({"server": "nope"}),
        dir.path(),
    )
    .await
    .unwrap_err();
    assert!(
        err.message.contains("the servers are: r"),
        "{}",
        err.message
    );
    // A stopped server is not dialled.
    clients.shutdown().await;
    let out = call(&tools, "RefreshMcpTools", json!({}), dir.path())
        .await
        .unwrap();
    assert_eq!(json_of(&out)[0]["status"], "not_connected");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_for_servers_waits_for_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let broken = ServerSpec::stdio("broken", "/nonexistent/server", vec![]);
    let clients = start(vec![oversized("r"), broken], dir.path()).await;
    let (tools, _) = clients.tools();
    let pid = clients.server("r").unwrap().pid();
    let crashed = call(&tools, "mcp__r__crash", json!({}), dir.path()).await;
    assert!(
        outcome(&crashed).contains("stopped"),
        "{}",
        outcome(&crashed)
    );
    // Right after the crash the server is on its way back, not connected.
    let out = call(
        &tools,
        "WaitForMcpServers",
        json!({"server": "r", "timeout_ms": 0}),
        dir.path(),
    )
    .await
    .unwrap();
    let v = json_of(&out);
    assert_eq!(v["servers"][0]["status"], "pending", "{v}");
    assert_eq!(v["timedOut"], true);
    // Waiting (bounded) sees it back.
    let out = tokio::time::timeout(
        Duration::from_secs(120),
        call(
            &tools,
            "WaitForMcpServers",
            json!({"timeout_ms": 100000}),
            dir.path(),
        ),
    )
    .await
    .unwrap()
    .unwrap();
    let v = json_of(&out);
    assert_eq!(v["timedOut"], false, "{v}");
    assert_eq!(v["servers"][0]["status"], "connected", "{v}");
    assert_eq!(v["servers"][1]["server"], "broken");
    assert_eq!(v["servers"][1]["status"], "failed");
    assert!(v["servers"][1]["error"]
        .as_str()
        .unwrap()
        .contains("cannot start"));
    assert_ne!(clients.server("r").unwrap().pid(), pid);
    let out = call(&tools, "mcp__r__echo", json!({"text": "back"}), dir.path()).await;
    assert_eq!(outcome(&out), "back");
    clients.shutdown().await;
}
