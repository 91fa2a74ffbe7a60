//! The HTTP front end against a real origin server on 127.0.0.1.

use baton_sandbox::proxy::{Protocol, Reason};
use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::support;

#[tokio::test]
async fn connect_tunnels_to_an_allowed_name() {
    let origin = Origin::start().await;
    let (proxy, mut events) = test_proxy(&["allowed.test"], &[]);
    let mut stream = TcpStream::connect(proxy.http_addr()).await.unwrap();
    let connect = format!(
        "CONNECT allowed.test:{0} HTTP/1.1\r\nHost: allowed.test:{0}\r\n\r\n",
        origin.port()
    );
    stream.write_all(connect.as_bytes()).await.unwrap();
    let head = read_head(&mut stream).await;
    assert_eq!(status(&head), 200, "{head}");
    let response = get_over(stream, "allowed.test", "/through-tunnel").await;
    assert!(
        response.ends_with("hello from origin: /through-tunnel"),
        "{response}"
    );
    let seen = drain(&mut events);
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].domain, "allowed.test");
    assert_eq!(seen[0].port, origin.port());
    assert!(seen[0].allowed);
    assert_eq!(seen[0].protocol, Protocol::HttpConnect);
    assert_eq!(
        seen[0].reason,
        Reason::Allowed {
            pattern: "allowed.test".into()
        }
    );
}

#[tokio::test]
async fn connect_forwards_bytes_sent_right_after_the_head() {
    let origin = Origin::start().await;
    let (proxy, _events) = test_proxy(&["allowed.test"], &[]);
    let request = format!(
        "CONNECT allowed.test:{} HTTP/1.1\r\n\r\nGET /eager HTTP/1.1\r\nHost: x\r\n\r\n",
        origin.port()
    );
    let response = exchange(proxy.http_addr(), request.as_bytes()).await;
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(
        response.ends_with("hello from origin: /eager"),
        "{response}"
    );
}

#[tokio::test]
async fn absolute_form_is_rewritten_to_origin_form() {
    let origin = Origin::start().await;
    let (proxy, mut events) = test_proxy(&["allowed.test"], &[]);
    let request = format!(
        "GET http://Allowed.Test:{}/path/x?q=1#frag HTTP/1.1\r\nHost: evil.test\r\nProxy-Authorization: Basic c2VjcmV0\r\n\
         Connection: keep-alive, X-Hop\r\nX-Hop: gone\r\nX-Kept: yes\r\n\r\n",
        origin.port()
    );
    let response = exchange(proxy.http_addr(), request.as_bytes()).await;
    assert_eq!(status(&response), 200, "{response}");
    assert!(
        response.ends_with("hello from origin: /path/x?q=1"),
        "{response}"
    );
    let head = origin.last_head();
    assert!(head.starts_with("GET /path/x?q=1 HTTP/1.1\r\n"), "{head}");
    assert!(
        head.contains(&format!("\r\nHost: allowed.test:{}\r\n", origin.port())),
        "{head}"
    );
    assert!(head.contains("\r\nConnection: close\r\n"), "{head}");
    assert!(head.contains("\r\nX-Kept: yes\r\n"), "{head}");
    for gone in ["evil.test", "Proxy-Authorization", "X-Hop", "keep-alive"] {
        assert!(
            !head.contains(gone),
            "{gone} must not reach the origin: {head}"
        );
    }
    let seen = drain(&mut events);
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].protocol, Protocol::HttpForward);
}

#[tokio::test]
async fn request_body_is_forwarded_exactly_and_nothing_after_it() {
    let origin = Origin::start().await;
    let (proxy, _events) = test_proxy(&["allowed.test"], &[]);
    // A second request is pipelined behind the body, for a host the rules
    // refuse; it must not travel down the connection opened for the first.
    let request = format!(
        "POST http://allowed.test:{0}/up HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello\
         GET http://other.test:{0}/smuggled HTTP/1.1\r\nHost: other.test\r\n\r\n",
        origin.port()
    );
    let response = exchange(proxy.http_addr(), request.as_bytes()).await;
    assert!(
        response.ends_with("hello from origin: /up body=hello"),
        "{response}"
    );
    assert_eq!(origin.heads.lock().unwrap().len(), 1);
    assert!(!origin.last_head().contains("smuggled"));
    assert_eq!(origin.bodies.lock().unwrap()[0], b"hello");
}

#[tokio::test]
async fn refusals_answer_403_and_name_the_domain() {
    let origin = Origin::start().await;
    let (proxy, mut events) = test_proxy(&["*.corp.test"], &["secret.corp.test"]);
    let port = origin.port();
    let cases = [
        ("secret.corp.test", "denied by secret.corp.test"),
        ("corp.test", "not in the allowed domains"),
        ("other.test", "not in the allowed domains"),
        ("127.0.0.1", "not in the allowed domains"),
    ];
    for (host, why) in cases {
        for request in [
            format!("CONNECT {host}:{port} HTTP/1.1\r\n\r\n"),
            format!("GET http://{host}:{port}/ HTTP/1.1\r\n\r\n"),
        ] {
            let response = exchange(proxy.http_addr(), request.as_bytes()).await;
            assert_eq!(status(&response), 403, "{request}: {response}");
            assert!(
                response.contains(&format!("{host}:{port} {why}")),
                "{response}"
            );
        }
    }
    assert_eq!(
        origin.accepted(),
        0,
        "no refused request reached the origin"
    );
    for allowed in ["api.corp.test", "deep.api.corp.test"] {
        let response = exchange(
            proxy.http_addr(),
            format!("GET http://{allowed}:{port}/ok HTTP/1.1\r\n\r\n").as_bytes(),
        )
        .await;
        assert_eq!(status(&response), 200, "{allowed}: {response}");
    }
    let seen = drain(&mut events);
    assert_eq!(seen.len(), 10);
    assert_eq!(seen.iter().filter(|e| e.allowed).count(), 2);
    assert_eq!(
        seen[0].reason,
        Reason::Denied {
            pattern: "secret.corp.test".into()
        }
    );
}

#[tokio::test]
async fn unresolvable_and_unreachable_names_answer_502() {
    let closed_port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let (proxy, mut events) = test_proxy(&["*.unknown.test", "allowed.test"], &[]);
    let response = exchange(
        proxy.http_addr(),
        b"CONNECT nowhere.unknown.test:443 HTTP/1.1\r\n\r\n",
    )
    .await;
    assert_eq!(status(&response), 502, "{response}");
    assert!(response.contains("does not resolve"), "{response}");
    let request = format!("CONNECT allowed.test:{closed_port} HTTP/1.1\r\n\r\n");
    let response = exchange(proxy.http_addr(), request.as_bytes()).await;
    assert_eq!(status(&response), 502, "{response}");
    assert!(response.contains("connection failed"), "{response}");
    let seen = drain(&mut events);
    assert!(matches!(seen[0].reason, Reason::Unresolvable(_)) && !seen[0].allowed);
}

#[tokio::test]
async fn malformed_requests_get_400_and_the_proxy_keeps_serving() {
    let origin = Origin::start().await;
    let (proxy, _events) = test_proxy(&["allowed.test"], &[]);
    let port = origin.port();
    let bad: Vec<(Vec<u8>, u16)> = vec![
        (b"garbage\r\n\r\n".to_vec(), 400),
        (b"GET / HTTP/1.1\r\n\r\n".to_vec(), 400),
        (b"GET https://allowed.test/ HTTP/1.1\r\n\r\n".to_vec(), 400),
        (b"CONNECT allowed.test HTTP/1.1\r\n\r\n".to_vec(), 400),
        (b"CONNECT allowed.test:0 HTTP/1.1\r\n\r\n".to_vec(), 400),
        (b"CONNECT allowed.test:99999 HTTP/1.1\r\n\r\n".to_vec(), 400),
        (format!("GET http://allowed.test:{port}@other.test/ HTTP/1.1\r\n\r\n").into_bytes(), 400),
        (b"GET http://127.1/ HTTP/1.1\r\n\r\n".to_vec(), 400),
        // Host spellings that a lenient parser might read as another host.
        (b"GET http://allowed.test%2eevil.test/ HTTP/1.1\r\n\r\n".to_vec(), 400),
        (b"GET http://allowed.test\\@evil.test/ HTTP/1.1\r\n\r\n".to_vec(), 400),
        (b"CONNECT allowed.test%00:443 HTTP/1.1\r\n\r\n".to_vec(), 400),
        (b"CONNECT [fe80::1%25eth0]:443 HTTP/1.1\r\n\r\n".to_vec(), 400),
        (b"CONNECT 0x7f000001:443 HTTP/1.1\r\n\r\n".to_vec(), 400),
        (b"GET http://allowed.test/ HTTP/1.1\nHost: x\n\n\r\n\r\n".to_vec(), 400),
        (b"GET http://allowed.test/ HTTP/1.1\r\n Folded: x\r\n\r\n".to_vec(), 400),
        (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n".to_vec(), 400),
        (format!("POST http://allowed.test:{port}/ HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n").into_bytes(), 400),
        (format!("POST http://allowed.test:{port}/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n").into_bytes(), 411),
        (format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(70 * 1024)).into_bytes(), 431),
    ];
    for (request, expected) in &bad {
        let response = exchange(proxy.http_addr(), request).await;
        assert_eq!(
            status(&response),
            *expected,
            "{:?} -> {response}",
            String::from_utf8_lossy(&request[..request.len().min(80)])
        );
    }
    assert_eq!(origin.accepted(), 0);
    let response = exchange(
        proxy.http_addr(),
        format!("GET http://allowed.test:{port}/still HTTP/1.1\r\n\r\n").as_bytes(),
    )
    .await;
    assert!(
        response.ends_with("hello from origin: /still"),
        "{response}"
    );
}

#[tokio::test]
async fn a_slow_head_times_out_with_408() {
    let proxy = baton_sandbox::proxy::Proxy::builder(rules(&["allowed.test"], &[]))
        .resolver(test_resolver())
        .head_timeout(std::time::Duration::from_millis(300))
        .start()
        .unwrap();
    let mut stream = TcpStream::connect(proxy.http_addr()).await.unwrap();
    stream
        .write_all(b"GET http://allowed.test/ HTTP/1.1\r\n")
        .await
        .unwrap();
    let mut out = String::new();
    let read = tokio::time::timeout(PATIENCE, stream.read_to_string(&mut out)).await;
    assert!(read.is_ok(), "the proxy gave up on the slow head");
    assert_eq!(status(&out), 408, "{out}");
}
