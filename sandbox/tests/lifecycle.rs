//! Listeners handed in by the caller, bounded events, shutdown and drop.

use std::time::Duration;

use baton_sandbox::proxy::{DomainRules, Proxy};
use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UnixStream};
use tokio::sync::mpsc;

use crate::support;

#[tokio::test]
async fn extra_tcp_listeners_serve_both_protocols() {
    let origin = Origin::start().await;
    let (proxy, _events) = test_proxy(&["allowed.test"], &[]);
    let http = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let socks = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let (http_addr, socks_addr) = (http.local_addr().unwrap(), socks.local_addr().unwrap());
    proxy.serve_http_listener(http).unwrap();
    proxy.serve_socks_listener(socks).unwrap();
    let response = exchange(
        http_addr,
        format!(
            "GET http://allowed.test:{}/extra HTTP/1.1\r\n\r\n",
            origin.port()
        )
        .as_bytes(),
    )
    .await;
    assert!(
        response.ends_with("hello from origin: /extra"),
        "{response}"
    );
    let (code, stream) =
        socks_request(socks_addr, 1, Target::Name("allowed.test"), origin.port()).await;
    assert_eq!(code, Some(0));
    assert!(get_over(stream, "allowed.test", "/extra-socks")
        .await
        .ends_with("/extra-socks"));
}

#[tokio::test]
async fn unix_listeners_serve_both_protocols() {
    let origin = Origin::start().await;
    let (proxy, _events) = test_proxy(&["allowed.test"], &[]);
    let dir = std::env::temp_dir().join(format!("baton-proxy-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (http_path, socks_path) = (dir.join("http.sock"), dir.join("socks.sock"));
    let _ = std::fs::remove_file(&http_path);
    let _ = std::fs::remove_file(&socks_path);
    proxy
        .serve_http_unix_listener(std::os::unix::net::UnixListener::bind(&http_path).unwrap())
        .unwrap();
    proxy
        .serve_socks_unix_listener(std::os::unix::net::UnixListener::bind(&socks_path).unwrap())
        .unwrap();

    let mut s = UnixStream::connect(&http_path).await.unwrap();
    let request = format!(
        "GET http://allowed.test:{}/unix HTTP/1.1\r\n\r\n",
        origin.port()
    );
    s.write_all(request.as_bytes()).await.unwrap();
    let mut out = String::new();
    tokio::time::timeout(PATIENCE, s.read_to_string(&mut out))
        .await
        .unwrap()
        .unwrap();
    assert!(out.ends_with("hello from origin: /unix"), "{out}");

    let mut s = UnixStream::connect(&socks_path).await.unwrap();
    s.write_all(&[5, 1, 0]).await.unwrap();
    let name = b"allowed.test";
    let mut request = vec![5, 1, 0, 3, name.len() as u8];
    request.extend_from_slice(name);
    request.extend_from_slice(&origin.port().to_be_bytes());
    s.write_all(&request).await.unwrap();
    let mut replies = [0u8; 12];
    tokio::time::timeout(PATIENCE, s.read_exact(&mut replies))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(replies[..4], [5, 0, 5, 0]);
    s.write_all(b"GET /unix-socks HTTP/1.1\r\nHost: a\r\n\r\n")
        .await
        .unwrap();
    let mut out = String::new();
    tokio::time::timeout(PATIENCE, s.read_to_string(&mut out))
        .await
        .unwrap()
        .unwrap();
    assert!(out.ends_with("/unix-socks"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_full_event_channel_drops_events_without_blocking() {
    let (tx, mut rx) = mpsc::channel(1);
    let proxy = Proxy::builder(rules(&["allowed.test"], &[]))
        .resolver(test_resolver())
        .events(tx)
        .start()
        .unwrap();
    for _ in 0..3 {
        let response = exchange(proxy.http_addr(), b"CONNECT other.test:80 HTTP/1.1\r\n\r\n").await;
        assert_eq!(status(&response), 403);
    }
    assert_eq!(drain(&mut rx).len(), 1);
    assert_eq!(proxy.dropped_events(), 2);
}

#[tokio::test]
async fn rules_can_be_replaced_while_running() {
    let origin = Origin::start().await;
    let (proxy, _events) = test_proxy(&[], &[]);
    let request = format!(
        "GET http://allowed.test:{}/ HTTP/1.1\r\n\r\n",
        origin.port()
    );
    assert_eq!(
        status(&exchange(proxy.http_addr(), request.as_bytes()).await),
        403
    );
    proxy.set_rules(rules(&["allowed.test"], &[]));
    assert_eq!(
        status(&exchange(proxy.http_addr(), request.as_bytes()).await),
        200
    );
    proxy.set_rules(DomainRules::deny_all());
    assert_eq!(
        status(&exchange(proxy.http_addr(), request.as_bytes()).await),
        403
    );
}

/// Opens a tunnel through the proxy and checks it works.
async fn open_tunnel(proxy: &Proxy, origin: &Origin) -> TcpStream {
    let mut stream = TcpStream::connect(proxy.http_addr()).await.unwrap();
    let connect = format!("CONNECT allowed.test:{} HTTP/1.1\r\n\r\n", origin.port());
    stream.write_all(connect.as_bytes()).await.unwrap();
    assert_eq!(status(&read_head(&mut stream).await), 200);
    stream
}

/// True once the tunnel reports end of stream or an error.
async fn closes(mut stream: TcpStream) -> bool {
    let mut buf = [0u8; 64];
    matches!(
        tokio::time::timeout(PATIENCE, stream.read(&mut buf)).await,
        Ok(Ok(0) | Err(_))
    )
}

#[tokio::test]
async fn shutdown_ends_tunnels_and_listeners() {
    let origin = Origin::start().await;
    let (proxy, _events) = test_proxy(&["allowed.test"], &[]);
    let (http, socks) = (proxy.http_addr(), proxy.socks_addr());
    // An idle tunnel: the origin waits for a request that never comes.
    let tunnel = open_tunnel(&proxy, &origin).await;
    tokio::time::timeout(PATIENCE, proxy.shutdown())
        .await
        .expect("shutdown finishes");
    assert!(closes(tunnel).await, "the tunnel was closed");
    assert!(
        TcpStream::connect(http).await.is_err(),
        "HTTP listener closed"
    );
    assert!(
        TcpStream::connect(socks).await.is_err(),
        "SOCKS listener closed"
    );
}

#[tokio::test]
async fn dropping_the_proxy_ends_tunnels_and_listeners() {
    let origin = Origin::start().await;
    let (proxy, _events) = test_proxy(&["allowed.test"], &[]);
    let http = proxy.http_addr();
    let tunnel = open_tunnel(&proxy, &origin).await;
    drop(proxy);
    assert!(closes(tunnel).await, "the tunnel was closed");
    // The accept loop notices the cancellation on its next poll.
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while TcpStream::connect(http).await.is_ok() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "listener still open"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn connections_beyond_the_limit_wait_their_turn() {
    let origin = Origin::start().await;
    let proxy = Proxy::builder(rules(&["allowed.test"], &[]))
        .resolver(test_resolver())
        .allow_loopback_targets_for_tests(true)
        .max_connections(1)
        .start()
        .unwrap();
    let tunnel = open_tunnel(&proxy, &origin).await;
    // The second client is accepted by the kernel but not served yet.
    let request = format!(
        "GET http://allowed.test:{}/second HTTP/1.1\r\n\r\n",
        origin.port()
    );
    let second = tokio::spawn({
        let addr = proxy.http_addr();
        async move { exchange(addr, request.as_bytes()).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!second.is_finished(), "served beyond the limit");
    drop(tunnel);
    let response = tokio::time::timeout(PATIENCE, second)
        .await
        .unwrap()
        .unwrap();
    assert!(response.ends_with("/second"), "{response}");
}
