//! curl, a real client, through both proxies.

use std::process::Stdio;

use support::*;
use tokio::process::Command;

use crate::support;

/// Runs curl with no proxy settings from the environment; returns its exit
/// code, standard output and standard error.
async fn curl(args: &[&str]) -> (i32, String, String) {
    let mut command = Command::new("curl");
    for var in [
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "no_proxy",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "NO_PROXY",
    ] {
        command.env_remove(var);
    }
    command
        .args(["--silent", "--show-error", "--max-time", "20"])
        .args(args)
        .stdin(Stdio::null())
        .kill_on_drop(true);
    let output = tokio::time::timeout(PATIENCE, command.output())
        .await
        .expect("curl finishes")
        .expect("curl runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test]
async fn curl_through_the_http_proxy() {
    let origin = Origin::start().await;
    let (proxy, _events) = test_proxy(&["allowed.test"], &["other.test"]);
    let proxy_url = format!("http://{}", proxy.http_addr());
    let url = format!("http://allowed.test:{}/plain", origin.port());
    // Absolute-form forwarding.
    let (code, out, err) = curl(&["-x", &proxy_url, &url]).await;
    assert_eq!(
        (code, out.as_str()),
        (0, "hello from origin: /plain"),
        "{err}"
    );
    // CONNECT tunnel.
    let (code, out, err) = curl(&["-x", &proxy_url, "--proxytunnel", &url]).await;
    assert_eq!(
        (code, out.as_str()),
        (0, "hello from origin: /plain"),
        "{err}"
    );
    let hits = origin.accepted();

    let denied = format!("http://other.test:{}/", origin.port());
    let (code, out, _) = curl(&["-x", &proxy_url, "--write-out", "%{http_code}", &denied]).await;
    assert_eq!(code, 0);
    assert!(
        out.contains("other.test:") && out.contains("denied by other.test") && out.ends_with("403"),
        "{out}"
    );
    let (code, _, err) = curl(&["-x", &proxy_url, "--proxytunnel", &denied]).await;
    assert_ne!(code, 0, "CONNECT refused");
    assert!(err.contains("403"), "{err}");
    assert_eq!(
        origin.accepted(),
        hits,
        "refused requests never reached the origin"
    );
}

#[tokio::test]
async fn curl_through_the_socks_proxy() {
    let origin = Origin::start().await;
    let (proxy, _events) = test_proxy(&["allowed.test"], &[]);
    let socks = proxy.socks_addr().to_string();
    let url = format!("http://allowed.test:{}/socks", origin.port());
    let (code, out, err) = curl(&["--socks5-hostname", &socks, &url]).await;
    assert_eq!(
        (code, out.as_str()),
        (0, "hello from origin: /socks"),
        "{err}"
    );
    let hits = origin.accepted();

    let refused = format!("http://other.test:{}/", origin.port());
    let (code, _, err) = curl(&["--socks5-hostname", &socks, &refused]).await;
    assert_ne!(code, 0, "refused over SOCKS5: {err}");
    // curl resolving locally sends an IPv4 address, which no pattern names.
    let (code, _, err) = curl(&[
        "--socks5",
        &socks,
        "--resolve",
        &format!("allowed.test:{}:127.0.0.1", origin.port()),
        &url,
    ])
    .await;
    assert_ne!(code, 0, "IP literal refused over SOCKS5: {err}");
    assert_eq!(origin.accepted(), hits);
}
