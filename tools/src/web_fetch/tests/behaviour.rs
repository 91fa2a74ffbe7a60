use std::time::{Duration, Instant};

use baton_engine::call::Outcome;
use baton_engine::{PermissionTarget, ToolUse};
use serde_json::json;

use super::server::Server;
use crate::registry::BuiltinConfig;
use crate::test_support::Harness;

fn config() -> BuiltinConfig {
    BuiltinConfig {
        web_fetch_max_bytes: 20_000,
        web_fetch_timeout: Duration::from_secs(2),
        web_fetch_max_redirects: 3,
        ..BuiltinConfig::default()
    }
}

fn harness() -> Harness {
    Harness::new(vec![crate::web_fetch::tool(&config()).unwrap()])
}

async fn fetch(h: &Harness, url: &str) -> baton_engine::call::CallResult {
    h.run(
        "WebFetch",
        json!({"url": url, "prompt": "what is on the page?"}),
        h.dir.path(),
    )
    .await
}

#[tokio::test]
async fn html_is_converted_to_text() {
    let server = Server::start().await;
    let h = harness();
    let result = fetch(&h, &server.url("/page")).await;
    assert!(!result.is_error, "{}", result.text());
    let text = result.text();
    assert!(
        text.contains(&format!("URL: {}", server.url("/page"))),
        "{text}"
    );
    assert!(text.contains("Status: 200 OK"), "{text}");
    assert!(text.contains("Prompt: what is on the page?"), "{text}");
    assert!(text.contains("Welcome Heading"), "{text}");
    assert!(text.contains("apple") && text.contains("banana"), "{text}");
    assert!(
        !text.contains("<h1>") && !text.contains("var hidden"),
        "{text}"
    );
    assert!(!text.contains("Redirected"), "{text}");
}

#[tokio::test]
async fn text_types_pass_through_and_binary_is_refused() {
    let server = Server::start().await;
    let h = harness();
    let plain = fetch(&h, &server.url("/text")).await;
    assert!(
        plain.text().ends_with("just plain text\nsecond line"),
        "{}",
        plain.text()
    );
    let json = fetch(&h, &server.url("/json")).await;
    assert!(
        json.text().ends_with(r#"{"answer": 42}"#),
        "{}",
        json.text()
    );
    let image = fetch(&h, &server.url("/image")).await;
    assert!(image.is_error);
    assert!(
        image.text().contains("binary (image/png"),
        "{}",
        image.text()
    );
}

#[tokio::test]
async fn redirects_are_followed_and_reported() {
    let server = Server::start().await;
    let h = harness();
    let result = fetch(&h, &server.url("/hop/2")).await;
    assert!(!result.is_error, "{}", result.text());
    let text = result.text();
    assert!(
        text.contains(&format!("URL: {}", server.url("/page"))),
        "{text}"
    );
    assert!(text.contains("Redirected 3 time(s)"), "{text}");
    assert!(
        text.contains(&format!(
            "{} -> {} (302 Found)",
            server.url("/hop/2"),
            server.url("/hop/1")
        )),
        "{text}"
    );
    assert!(text.contains("(301 Moved Permanently)"), "{text}");
    assert!(text.contains("Welcome Heading"));

    let too_many = fetch(&h, &server.url("/loop")).await;
    assert!(too_many.is_error);
    assert!(
        too_many.text().contains("after 3 redirects"),
        "{}",
        too_many.text()
    );

    let other_host = fetch(&h, &server.url("/elsewhere")).await;
    assert!(!other_host.is_error, "{}", other_host.text());
    let to = format!("http://localhost:{}/page", server.port);
    assert!(
        other_host.text().contains(&format!("url = {to}")),
        "{}",
        other_host.text()
    );
    assert!(!other_host.text().contains("Welcome Heading"));

    let ftp = fetch(&h, &server.url("/to-ftp")).await;
    assert!(ftp.is_error);
    assert!(
        ftp.text().contains("only fetches http and https"),
        "{}",
        ftp.text()
    );
}

#[tokio::test]
async fn bodies_over_the_limit_are_refused() {
    let server = Server::start().await;
    let h = harness();
    for path in ["/big", "/big-unsized"] {
        let result = fetch(&h, &server.url(path)).await;
        assert!(result.is_error, "{path}");
        assert!(
            result
                .text()
                .contains("larger than the size limit of 20000 bytes"),
            "{path}: {}",
            result.text()
        );
    }
}

#[tokio::test]
async fn a_hanging_server_times_out() {
    let server = Server::start().await;
    let h = harness();
    let started = Instant::now();
    let result = fetch(&h, &server.url("/hang")).await;
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    assert!(result.is_error);
    assert!(result.text().contains("time"), "{}", result.text());
}

#[tokio::test]
async fn http_errors_and_unreachable_hosts_are_clear() {
    let server = Server::start().await;
    let h = harness();
    let missing = fetch(&h, &server.url("/missing")).await;
    assert!(missing.is_error);
    assert_eq!(missing.outcome, Outcome::ToolError);
    assert!(
        missing.text().contains("404 Not Found"),
        "{}",
        missing.text()
    );
    assert!(
        missing.text().contains("No such page"),
        "{}",
        missing.text()
    );

    // Nothing listens on port 1; a port found free and released could be
    // taken by another test's server before the fetch.
    let refused = fetch(&h, "http://127.0.0.1:1/").await;
    assert!(refused.is_error);
    assert!(
        refused.text().contains("Could not connect to 127.0.0.1"),
        "{}",
        refused.text()
    );
}

#[tokio::test]
async fn bad_urls_are_rejected_before_any_request() {
    let h = harness();
    for (url, expected) in [
        ("ftp://example.com/file", "only fetches http and https"),
        ("file:///etc/passwd", "only fetches http and https"),
        ("not a url", "not a valid URL"),
        ("http://", "not a valid URL"),
    ] {
        let result = fetch(&h, url).await;
        assert!(result.is_error, "{url}");
        assert_eq!(result.outcome, Outcome::ValidationFailed, "{url}");
        assert!(result.text().contains(expected), "{url}: {}", result.text());
    }
    let no_prompt = h
        .run(
            "WebFetch",
            json!({"url": "https://example.com"}),
            h.dir.path(),
        )
        .await;
    assert_eq!(no_prompt.outcome, Outcome::InvalidInput);
}

#[tokio::test]
async fn is_safe_read_only_open_world_and_targets_the_url() {
    let h = harness();
    let prepared = h.pipeline.prepare(ToolUse::new(
        "c",
        "WebFetch",
        json!({"url": "https://example.com/a", "prompt": "p"}),
    ));
    assert!(prepared.safe && prepared.read_only);
    let tool = crate::web_fetch::tool(&config()).unwrap();
    let input = tool
        .parse(&json!({"url": "https://example.com/a", "prompt": "p"}))
        .unwrap();
    assert!(tool.is_open_world(&input));
    assert_eq!(
        tool.permission_target(&input, &h.context(h.dir.path())),
        PermissionTarget::Url("https://example.com/a".into())
    );
}

#[tokio::test]
async fn cancelling_stops_a_pending_fetch() {
    let server = Server::start().await;
    let h = Harness::new(vec![crate::web_fetch::tool(&BuiltinConfig {
        web_fetch_timeout: Duration::from_secs(120),
        ..config()
    })
    .unwrap()]);
    let ctx = h.context(h.dir.path());
    let cancel = ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        cancel.cancel(baton_engine::CancelReason::User);
    });
    let started = Instant::now();
    let result = h
        .run_with(
            "WebFetch",
            json!({"url": server.url("/hang"), "prompt": "p"}),
            ctx,
        )
        .await;
    assert!(started.elapsed() < Duration::from_secs(60));
    assert_eq!(result.outcome, Outcome::Cancelled { started: true });
    assert!(
        result.text().contains("stopped before it completed"),
        "{}",
        result.text()
    );
}
