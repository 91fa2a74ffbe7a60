//! `/metrics` of `baton mcp serve --http` (issue 24): scraped over real HTTP
//! on 127.0.0.1 after real calls, parsed with a Prometheus text parser, and
//! guarded like `/mcp` (token, `Host`, `Origin`).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use baton_test_support::worker::Worker;
use prometheus_parse::{Sample, Scrape, Value};
use serde_json::json;

use crate::support::routed::routed_engine;
use crate::support::BATON;

const TOKEN: &str = "metrics-test-token-0123456789abcdef";

/// One HTTP/1.1 GET; returns the status code and the body.
fn get(base: &str, path: &str, headers: &[(&str, &str)]) -> (u16, String) {
    let authority = base
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_string();
    let mut stream = TcpStream::connect(&authority).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut request = format!("GET {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        request.push_str(&format!("Host: {authority}\r\n"));
    }
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).unwrap();
    let text = String::from_utf8_lossy(&response).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {text:?}"));
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("");
    (status, dechunk(body))
}

/// Undoes `Transfer-Encoding: chunked` when the body uses it.
fn dechunk(body: &str) -> String {
    let mut out = String::new();
    let mut rest = body;
    loop {
        let Some((size, after)) = rest.split_once("\r\n") else {
            return body.to_string();
        };
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            return body.to_string();
        };
        if n == 0 {
            return out;
        }
        if after.len() < n {
            return body.to_string();
        }
        out.push_str(&after[..n]);
        rest = after[n..].trim_start_matches("\r\n");
    }
}

fn samples<'a>(scrape: &'a Scrape, metric: &str) -> Vec<&'a Sample> {
    scrape
        .samples
        .iter()
        .filter(|s| s.metric == metric)
        .collect()
}

fn number(value: &Value) -> f64 {
    match value {
        Value::Counter(v) | Value::Gauge(v) | Value::Untyped(v) => *v,
        other => panic!("not a number: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_are_scraped_after_real_calls_and_guarded_like_mcp() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let worker = Worker::start(BATON, &root.join("worker"), TOKEN);
    let local = root.join("local");
    std::fs::create_dir_all(&local).unwrap();
    let engine = routed_engine(&local, &[&worker], "metrics", TOKEN, &["Bash"]);
    let batch = engine.open_batch().await.unwrap();
    batch
        .add(baton::ToolUse::new(
            "ok",
            "Bash",
            json!({"command": "echo hi"}),
        ))
        .unwrap();
    batch
        .add(baton::ToolUse::new(
            "bad",
            "Bash",
            json!({"command": "exit 4"}),
        ))
        .unwrap();
    let (results, _) = batch.finish().await;
    assert_eq!(results.len(), 2);

    let auth = format!("Bearer {TOKEN}");
    let base = worker.url.clone();
    let (status, body) =
        tokio::task::spawn_blocking(move || get(&base, "/metrics", &[("Authorization", &auth)]))
            .await
            .unwrap();
    assert_eq!(status, 200, "{body}");
    let scrape = Scrape::parse(body.lines().map(|l| Ok(l.to_string()))).unwrap();

    let calls = samples(&scrape, "baton_calls_total");
    let count = |outcome: &str| {
        calls
            .iter()
            .filter(|s| {
                s.labels.get("tool") == Some("Bash") && s.labels.get("outcome") == Some(outcome)
            })
            .map(|s| number(&s.value))
            .sum::<f64>()
    };
    assert!(count("success") >= 1.0, "{body}");
    assert!(count("tool_error") >= 1.0, "{body}");

    // The phases the tracing span times, as a histogram per phase.
    let phases: Vec<&str> = scrape
        .samples
        .iter()
        .filter(|s| s.metric.starts_with("baton_call_phase_seconds"))
        .filter_map(|s| s.labels.get("phase"))
        .collect();
    for phase in ["queue", "validate", "hooks", "permission", "exec"] {
        assert!(phases.contains(&phase), "no {phase} in {body}");
    }
    // Gauges: nothing queued or running once the calls are done; the shells'
    // process trees are gone.
    for gauge in [
        "baton_calls_queued",
        "baton_calls_running",
        "baton_process_trees",
    ] {
        let s = samples(&scrape, gauge);
        assert_eq!(s.len(), 1, "{gauge} in {body}");
        assert_eq!(number(&s[0].value), 0.0, "{gauge} in {body}");
    }

    // The same guards as /mcp.
    let base = worker.url.clone();
    let refused = tokio::task::spawn_blocking(move || {
        let auth = format!("Bearer {TOKEN}");
        vec![
            get(&base, "/metrics", &[]).0,
            get(&base, "/metrics", &[("Authorization", "Bearer wrong")]).0,
            get(
                &base,
                "/metrics",
                &[("Authorization", &auth), ("Host", "evil.example")],
            )
            .0,
            get(
                &base,
                "/metrics",
                &[("Authorization", &auth), ("Origin", "https://evil.example")],
            )
            .0,
            get(
                &base,
                "/metrics",
                &[
                    ("Authorization", &auth),
                    ("Origin", "http://localhost:3000"),
                ],
            )
            .0,
        ]
    })
    .await
    .unwrap();
    assert_eq!(refused, vec![401, 401, 403, 403, 200]);
}
