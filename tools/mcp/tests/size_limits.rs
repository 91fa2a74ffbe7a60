//! MCP answers over the size limit (16 MiB per message): refused with an
//! error naming the limit, memory bounded, and the next call on the same
//! server unaffected. Real servers: servers/oversized.py over stdio and
//! streamable HTTP. The test that measures the peak memory runs in a
//! process of its own, so the peak belongs to it.

use std::time::{Duration, Instant};

use baton_mcp::{ServerSpec, MAX_FRAME};
use baton_test_support::own_process;
use common::*;
use serde_json::json;

use crate::common;

/// Generous: reading 100 MiB through a pipe takes well under a second on
/// an idle machine; the limit only catches a call left to its idle limit
/// (300 s).
const BOUNDED: Duration = Duration::from_secs(90);

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

#[test]
fn a_100_mb_answer_is_refused_and_the_next_call_works() {
    own_process!(a_100_mb_answer_is_refused_and_the_next_call_works, || {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime")
            .block_on(refuse_100_mb())
    });
}

async fn refuse_100_mb() {
    let dir = tempfile::tempdir().unwrap();
    let clients = start(vec![oversized("big")], dir.path()).await;
    assert!(
        clients.diagnostics().is_empty(),
        "{:?}",
        clients.diagnostics()
    );
    let (tools, _) = clients.tools();
    let pid = clients.server("big").unwrap().pid();
    let before = peak_rss_kib();
    // The id last (as the TypeScript SDK writes answers), then first (as
    // Python's SDK does): both are refused, by the right request.
    for id_last in [true, false] {
        let started = Instant::now();
        let big = call(
            &tools,
            "mcp__big__big",
            json!({"mb": 100, "id_last": id_last}),
            dir.path(),
        )
        .await;
        let took = started.elapsed();
        let said = outcome(&big);
        eprintln!("over stdio: {said}");
        assert!(
            said.contains("16 MiB") && said.contains(&MAX_FRAME.to_string()),
            "id_last={id_last}: {said}"
        );
        assert!(
            took < BOUNDED,
            "id_last={id_last}: the refusal took {took:?}"
        );
        let next = call(
            &tools,
            "mcp__big__echo",
            json!({"text": "after"}),
            dir.path(),
        )
        .await;
        assert_eq!(outcome(&next), "after", "id_last={id_last}");
    }
    // Resynchronised, not restarted.
    assert_eq!(clients.server("big").unwrap().pid(), pid);
    let grown_mib = peak_rss_kib().saturating_sub(before) / 1024;
    assert!(
        grown_mib < 80,
        "two 100 MiB answers grew the peak memory by {grown_mib} MiB"
    );
    let tail = clients.server("big").unwrap().stderr_tail(5).join("\n");
    assert!(tail.contains("was dropped"), "{tail}");
    clients.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_off_frame_does_not_cost_the_next_call() {
    let dir = tempfile::tempdir().unwrap();
    let clients = start(vec![oversized("cut")], dir.path()).await;
    let (tools, _) = clients.tools();
    // Half a message and a newline: that call fails at once.
    let started = Instant::now();
    let cut = call(
        &tools,
        "mcp__cut__cut",
        json!({"newline": true}),
        dir.path(),
    )
    .await;
    assert!(outcome(&cut).contains("cut off"), "{}", outcome(&cut));
    assert!(started.elapsed() < BOUNDED);
    // Half a message with the next answer glued to it: the next call gets
    // its answer, the cut one an error.
    let first = {
        let tools = tools.clone();
        let dir = dir.path().to_path_buf();
        tokio::spawn(
            async move { call(&tools, "mcp__cut__cut", json!({"newline": false}), &dir).await },
        )
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = Instant::now();
    let next = call(
        &tools,
        "mcp__cut__echo",
        json!({"text": "whole"}),
        dir.path(),
    )
    .await;
    assert_eq!(outcome(&next), "whole");
    let first = tokio::time::timeout(BOUNDED, first).await.unwrap().unwrap();
    assert!(outcome(&first).contains("cut off"), "{}", outcome(&first));
    assert!(started.elapsed() < BOUNDED);
    clients.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_the_refusal_reads_as_a_sentence() {
    let dir = tempfile::tempdir().unwrap();
    let server = HttpChild::start("oversized.py", &["--http"]);
    let clients = start(
        vec![ServerSpec::http("web", server.url.clone())],
        dir.path(),
    )
    .await;
    assert!(
        clients.diagnostics().is_empty(),
        "{:?}",
        clients.diagnostics()
    );
    let (tools, _) = clients.tools();
    let big = call(&tools, "mcp__web__big", json!({"mb": 20}), dir.path()).await;
    let said = outcome(&big);
    eprintln!("over HTTP: {said}");
    assert!(said.contains("16 MiB"), "{said}");
    assert!(
        !said.contains("rmcp::") && !said.contains("Transport ["),
        "a Rust type dump: {said}"
    );
    let next = call(
        &tools,
        "mcp__web__echo",
        json!({"text": "fine"}),
        dir.path(),
    )
    .await;
    assert_eq!(outcome(&next), "fine");
    clients.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_two_calls_in_flight_the_id_at_the_end_picks_the_refused_one() {
    let dir = tempfile::tempdir().unwrap();
    let clients = start(vec![oversized("two")], dir.path()).await;
    let (tools, _) = clients.tools();
    // The server answers in order: the echo waits behind the big answer,
    // so at the crossing two requests are in flight and only the id at the
    // end of the big message can say which one it answers.
    let big = {
        let tools = tools.clone();
        let dir = dir.path().to_path_buf();
        tokio::spawn(async move {
            call(
                &tools,
                "mcp__two__big",
                json!({"mb": 40, "id_last": true, "delay_ms": 1500}),
                &dir,
            )
            .await
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let echo = call(
        &tools,
        "mcp__two__echo",
        json!({"text": "second"}),
        dir.path(),
    );
    let echo = tokio::time::timeout(BOUNDED, echo).await.unwrap();
    let big = tokio::time::timeout(BOUNDED, big).await.unwrap().unwrap();
    assert!(outcome(&big).contains("16 MiB"), "{}", outcome(&big));
    assert_eq!(outcome(&echo), "second");
    clients.shutdown().await;
}
