//! What the call journal costs per call: no-op calls (`Sleep` of 0 ms) on a
//! real worker (`baton mcp serve --http` on loopback), sent plain and sent
//! named (`_meta["dev.baton/call"]`, so the worker journals them: a receipt,
//! a start synced to disk, a result synced to disk), in the same run,
//! alternating rounds so that drift hits both alike.
//!
//! Two loads: one call at a time (each call pays its syncs alone) and 32 in
//! flight (group commit shares a sync among the calls that finish
//! together), and two journals: the default (a call's start and its result
//! synced) and `--journal-sync results` (only the result synced), each on a
//! worker of its own. Prints the median time per call of each and the
//! ratio named/plain on the same worker.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use baton_test_support::worker::Worker;
use rmcp::model::{CallToolRequestParams, RequestMetaObject};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceExt};
use serde_json::json;

const TOKEN: &str = "journal-bench-token";
const ROUNDS: usize = 7;
const SERIAL_CALLS: usize = 200;
const IN_FLIGHT: usize = 32;
const CONCURRENT_CALLS: usize = 1024;

static ID: AtomicU64 = AtomicU64::new(0);

fn params(named: bool) -> CallToolRequestParams {
    let mut p = CallToolRequestParams::new("Sleep")
        .with_arguments(json!({"duration_ms": 0}).as_object().unwrap().clone());
    if named {
        let id = ID.fetch_add(1, Ordering::Relaxed);
        let mut meta = RequestMetaObject::default();
        meta.0.insert(
            "dev.baton/call".into(),
            json!({"session": "bench", "id": format!("c{id}")}),
        );
        p.meta = Some(meta);
    }
    p
}

async fn one(client: &RunningService<RoleClient, ()>, named: bool) {
    let r = client.peer().call_tool(params(named)).await.unwrap();
    assert_ne!(r.is_error, Some(true), "{r:?}");
}

/// Seconds per call for `calls` calls, `in_flight` at a time.
async fn round(
    client: &Arc<RunningService<RoleClient, ()>>,
    named: bool,
    calls: usize,
    in_flight: usize,
) -> f64 {
    let start = Instant::now();
    let next = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for _ in 0..in_flight {
        let client = client.clone();
        let next = next.clone();
        tasks.push(tokio::spawn(async move {
            while next.fetch_add(1, Ordering::Relaxed) < calls as u64 {
                one(&client, named).await;
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    start.elapsed().as_secs_f64() / calls as f64
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

async fn client(url: &str) -> Arc<RunningService<RoleClient, ()>> {
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_string())
        .auth_header(TOKEN.to_string())
        .max_concurrent_requests(1024);
    let client = Arc::new(
        ().serve(StreamableHttpClientTransport::from_config(config))
            .await
            .unwrap(),
    );
    // Warm both paths.
    round(&client, false, 100, 8).await;
    round(&client, true, 100, 8).await;
    client
}

#[tokio::main(flavor = "multi_thread", worker_threads = 4)]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let bin = env!("CARGO_BIN_EXE_baton");
    let all = Worker::start(bin, &dir.path().join("all"), TOKEN);
    let results = Worker::start_with(
        bin,
        &dir.path().join("results"),
        TOKEN,
        &["--journal-sync", "results"],
        &[],
    );
    for (sync, worker) in [
        ("start and result synced", &all),
        ("result synced", &results),
    ] {
        let client = client(&worker.url).await;
        for (label, calls, in_flight) in [
            ("one call at a time", SERIAL_CALLS, 1),
            ("32 calls in flight", CONCURRENT_CALLS, IN_FLIGHT),
        ] {
            let (mut plain, mut named) = (Vec::new(), Vec::new());
            for _ in 0..ROUNDS {
                plain.push(round(&client, false, calls, in_flight).await);
                named.push(round(&client, true, calls, in_flight).await);
            }
            let (p, n) = (median(plain), median(named));
            println!(
                "journal ({sync})/{label}: plain {:.1} µs/call, journaled {:.1} µs/call, \
                 ratio {:.2}x",
                p * 1e6,
                n * 1e6,
                n / p
            );
        }
    }
    drop(all);
    drop(results);
    tokio::time::sleep(Duration::from_millis(10)).await;
}
