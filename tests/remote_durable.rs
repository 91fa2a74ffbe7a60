//! Durable remote calls, with real workers and a real network in between
//! that breaks on purpose: a TCP proxy that cuts connections or swallows
//! the worker's replies, and workers that are SIGKILLed and restarted on
//! their state directory. Every tool run on a worker is counted by a
//! PreToolUse hook of the worker's, so a call run twice shows.

use std::path::Path;
use std::time::{Duration, Instant};

use baton::{Engine, Event, ToolUse};
use baton_test_support::proxy::{addr_of, Proxy};
use baton_test_support::worker::Worker;
use serde_json::json;

const TOKEN: &str = "durable-test-token";

fn counted_worker(dir: &Path) -> Worker {
    crate::support::routed::counted_worker(dir, TOKEN, "tool_name")
}

fn runs(dir: &Path) -> Vec<String> {
    crate::support::routed::counted_runs(dir)
}

fn engine(local: &Path, url: &str) -> Engine {
    crate::support::routed::engine_on_urls(
        local,
        &[url.to_string()],
        "durable",
        TOKEN,
        &["Bash", "Read", "Write"],
    )
}

struct Setup {
    _dir: tempfile::TempDir,
    worker: Worker,
    proxy: Proxy,
    engine: Engine,
}

async fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let worker = counted_worker(&root.join("worker"));
    let proxy = Proxy::start(addr_of(&worker.url)).await;
    let local = root.join("host");
    std::fs::create_dir_all(&local).unwrap();
    let engine = engine(&local, &proxy.url_for(&worker.url));
    // Connect (and warm up) before the network is broken.
    let warm = run(&engine, vec![bash("warm", "true")]).await;
    assert!(!warm[0].is_error, "{}", warm[0].text());
    Setup {
        _dir: dir,
        worker,
        proxy,
        engine,
    }
}

fn bash(id: &str, command: &str) -> ToolUse {
    ToolUse::new(id, "Bash", json!({ "command": command }))
}

async fn run(engine: &Engine, calls: Vec<ToolUse>) -> Vec<baton::CallResult> {
    let run = crate::common::run_all(engine, calls).await;
    run.results.into_iter().map(|(_, r, _)| r).collect()
}

/// Waits until `check` holds (at most `limit`).
async fn until(limit: Duration, what: &str, mut check: impl FnMut() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn journal_says_finished(worker_dir: &Path, id: &str) -> bool {
    let text =
        std::fs::read_to_string(worker_dir.join(".state/journal/journal.log")).unwrap_or_default();
    text.lines().any(|l| {
        let v: serde_json::Value = serde_json::from_str(l).unwrap_or_default();
        v["t"] == "finished" && v["id"] == id
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_write_whose_result_died_with_its_worker_is_answered_after_restart_and_written_once() {
    let mut s = setup().await;
    let wdir = s.worker.dir.clone();
    let file = wdir.join("out.txt");
    // The worker's answers are swallowed: the Write runs and finishes there,
    // and its result never reaches the host.
    s.proxy.mute_replies(true);
    let engine = s.engine.clone();
    let f = file.to_str().unwrap().to_string();
    let call = tokio::spawn(async move {
        run(
            &engine,
            vec![ToolUse::new(
                "w1",
                "Write",
                json!({"file_path": f, "content": "once\n"}),
            )],
        )
        .await
    });
    until(
        Duration::from_secs(30),
        "the journal to hold the Write's result",
        || journal_says_finished(&wdir, "w1"),
    )
    .await;
    // The worker dies with the result undelivered, and comes back on its
    // state directory.
    s.worker.kill();
    let again = counted_worker(&wdir);
    s.proxy.set_upstream(addr_of(&again.url));
    s.proxy.mute_replies(false);
    s.proxy.cut();
    let out = tokio::time::timeout(Duration::from_secs(60), call)
        .await
        .expect("no result")
        .unwrap();
    assert_eq!(out.len(), 1);
    assert!(!out[0].is_error, "{}", out[0].text());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "once\n");
    assert_eq!(
        runs(&wdir),
        ["Bash", "Write"],
        "the Write ran more than once"
    );
    drop(again);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_connection_cut_mid_call_is_joined_again_for_a_writer_and_a_reader() {
    let s = setup().await;
    let wdir = s.worker.dir.clone();
    std::fs::write(wdir.join("data.txt"), "payload\n").unwrap();
    // A writer (it appends) and a reader, each cut once while it runs.
    for (id, command, want) in [
        (
            "writer",
            "echo ran >> side.txt; sleep 2; echo written",
            "written",
        ),
        ("reader", "sleep 2; cat data.txt", "payload"),
    ] {
        let engine = s.engine.clone();
        let call = tokio::spawn(async move { run(&engine, vec![bash(id, command)]).await });
        // Cut once the call runs there (its PreToolUse hook has counted it).
        until(
            Duration::from_secs(20),
            "the call to start on the worker",
            || runs(&wdir).len() >= 2,
        )
        .await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        s.proxy.cut();
        let out = tokio::time::timeout(Duration::from_secs(60), call)
            .await
            .expect("no result")
            .unwrap();
        assert!(!out[0].is_error, "{id}: {}", out[0].text());
        assert!(out[0].text().contains(want), "{id}: {}", out[0].text());
        assert_eq!(runs(&wdir).len(), 2, "{id} ran twice: {:?}", runs(&wdir));
        // Reset the count for the next call: the warm-up and this one.
        std::fs::write(wdir.join("runs.log"), "Bash\n").unwrap();
    }
    assert_eq!(
        std::fs::read_to_string(wdir.join("side.txt")).unwrap(),
        "ran\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_worker_killed_mid_call_and_not_restarted_gives_lost_with_the_output_seen() {
    let mut s = setup().await;
    let engine = s.engine.clone();
    let mut batch = engine.open_batch().await.unwrap();
    batch
        .add(bash("long", "echo compiling-step-1; sleep 60"))
        .unwrap();
    batch.end();
    let mut seen_progress = false;
    let mut result = None;
    let start = Instant::now();
    while let Some(e) = tokio::time::timeout(Duration::from_secs(90), batch.next_event())
        .await
        .expect("hung")
    {
        match e {
            Event::Progress { progress, .. }
                if progress.message.contains("compiling-step-1") && !seen_progress =>
            {
                seen_progress = true;
                s.worker.kill();
            }
            Event::Result { result: r, .. } => result = Some(*r),
            Event::Done(_) => break,
            _ => {}
        }
    }
    let r = result.expect("a result");
    assert!(seen_progress, "no progress came before the kill");
    assert!(r.is_error);
    let text = r.text();
    assert!(
        text.contains("could not be reached again") && text.contains("compiling-step-1"),
        "{text}"
    );
    assert!(
        start.elapsed() < Duration::from_secs(60),
        "took {:?}",
        start.elapsed()
    );
}

/// `baton/callStatus` says where a named call stands (a host whose answer
/// went missing asks it), and `baton/cancelCall` stops a running one.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_worker_says_where_a_named_call_stands_and_stops_it_on_request() {
    use rmcp::model::{CallToolRequestParams, ClientRequest, CustomRequest, RequestMetaObject};
    use rmcp::service::PeerRequestOptions;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::ServiceExt;

    let dir = tempfile::tempdir().unwrap();
    let worker = counted_worker(&dir.path().canonicalize().unwrap().join("w"));
    let config = StreamableHttpClientTransportConfig::with_uri(worker.url.clone())
        .auth_header(TOKEN.to_string());
    let client = ().serve(StreamableHttpClientTransport::from_config(config)).await.unwrap();
    let ask = |method: &str, id: &str| {
        let request = ClientRequest::CustomRequest(CustomRequest::new(
            method,
            Some(json!({"session": "s", "id": id})),
        ));
        let peer = client.peer().clone();
        async move {
            let handle = peer
                .send_request_with_option(request, PeerRequestOptions::no_options())
                .await
                .unwrap();
            serde_json::to_value(handle.rx.await.unwrap().unwrap()).unwrap()
        }
    };
    assert_eq!(ask("baton/callStatus", "c1").await["state"], "unknown");
    let mut params = CallToolRequestParams::new("Bash")
        .with_arguments(json!({"command": "sleep 30"}).as_object().unwrap().clone());
    let mut meta = RequestMetaObject::default();
    meta.0
        .insert("dev.baton/call".into(), json!({"session": "s", "id": "c1"}));
    params.meta = Some(meta);
    let peer = client.peer().clone();
    let call = tokio::spawn(async move { peer.call_tool(params).await });
    assert!(
        crate::common::wait_for(|| runs(&worker.dir).len() == 1).await,
        "the call never started"
    );
    assert_eq!(ask("baton/callStatus", "c1").await["state"], "running");
    assert_eq!(ask("baton/cancelCall", "c1").await["cancelled"], true);
    let result = tokio::time::timeout(Duration::from_secs(20), call)
        .await
        .expect("the cancelled call did not end")
        .unwrap()
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    assert_eq!(ask("baton/callStatus", "c1").await["state"], "ended");
}
