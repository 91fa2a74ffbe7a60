//! The SOCKS5 front end against a real origin server on 127.0.0.1.

use baton_sandbox::proxy::{Protocol, Reason};
use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::support;

const CONNECT: u8 = 1;

#[tokio::test]
async fn connect_by_domain_reaches_the_origin() {
    let origin = Origin::start().await;
    let (proxy, mut events) = test_proxy(&["allowed.test"], &[]);
    let (code, stream) = socks_request(
        proxy.socks_addr(),
        CONNECT,
        Target::Name("Allowed.Test."),
        origin.port(),
    )
    .await;
    assert_eq!(code, Some(0x00));
    let response = get_over(stream, "allowed.test", "/socks").await;
    assert!(
        response.ends_with("hello from origin: /socks"),
        "{response}"
    );
    let seen = drain(&mut events);
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].domain, "allowed.test");
    assert_eq!(seen[0].protocol, Protocol::Socks5);
    assert!(seen[0].allowed);
}

#[tokio::test]
async fn connect_by_ipv4_needs_a_pattern_naming_it() {
    let origin = Origin::start().await;
    let (proxy, mut events) = test_proxy(&["127.0.0.1"], &[]);
    let (code, stream) = socks_request(
        proxy.socks_addr(),
        CONNECT,
        Target::Ip(LOOPBACK),
        origin.port(),
    )
    .await;
    assert_eq!(code, Some(0x00));
    let response = get_over(stream, "127.0.0.1", "/by-ip").await;
    assert!(
        response.ends_with("hello from origin: /by-ip"),
        "{response}"
    );

    let (proxy, _events2) = test_proxy(&["allowed.test", "*.corp.test"], &[]);
    let (code, _) = socks_request(
        proxy.socks_addr(),
        CONNECT,
        Target::Ip(LOOPBACK),
        origin.port(),
    )
    .await;
    assert_eq!(code, Some(0x02), "an IP literal no pattern names");
    assert_eq!(drain(&mut events).len(), 1);
}

#[tokio::test]
async fn connect_by_ipv6() {
    let (proxy, mut events) = test_proxy(&["::1"], &[]);
    let Ok(origin) = Origin::start_on("[::1]:0").await else {
        // No IPv6 loopback here: still check that a v6 target the rules do
        // not name is refused.
        let (code, _) = socks_request(
            proxy.socks_addr(),
            CONNECT,
            Target::Ip("2001:db8::1".parse().unwrap()),
            80,
        )
        .await;
        assert_eq!(code, Some(0x02));
        return;
    };
    let (code, stream) = socks_request(
        proxy.socks_addr(),
        CONNECT,
        Target::Ip("::1".parse().unwrap()),
        origin.port(),
    )
    .await;
    assert_eq!(code, Some(0x00));
    let response = get_over(stream, "[::1]", "/v6").await;
    assert!(response.ends_with("hello from origin: /v6"), "{response}");
    let (code, _) = socks_request(
        proxy.socks_addr(),
        CONNECT,
        Target::Ip("2001:db8::1".parse().unwrap()),
        80,
    )
    .await;
    assert_eq!(code, Some(0x02));
    assert_eq!(drain(&mut events)[0].domain, "::1");
}

#[tokio::test]
async fn refusals_use_the_right_reply_codes() {
    let origin = Origin::start().await;
    let port = origin.port();
    let closed_port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let (proxy, mut events) = test_proxy(
        &["*.corp.test", "allowed.test", "*.unknown.test"],
        &["secret.corp.test"],
    );
    let socks = proxy.socks_addr();
    let cases: Vec<(u8, Target, u16, u8)> = vec![
        (CONNECT, Target::Name("secret.corp.test"), port, 0x02),
        (CONNECT, Target::Name("corp.test"), port, 0x02),
        (CONNECT, Target::Name("other.test"), port, 0x02),
        (CONNECT, Target::Name("bad name.test"), port, 0x02),
        (CONNECT, Target::Name("127.1"), port, 0x02),
        (CONNECT, Target::Name("x.unknown.test"), port, 0x04),
        (CONNECT, Target::Name("allowed.test"), closed_port, 0x05),
        (CONNECT, Target::Name("allowed.test"), 0, 0x01),
        (2, Target::Name("allowed.test"), port, 0x07),
        (3, Target::Name("allowed.test"), port, 0x07),
    ];
    for (command, target, port, expected) in cases {
        let (code, _) = socks_request(socks, command, target, port).await;
        assert_eq!(code, Some(expected), "command {command} port {port}");
    }
    assert_eq!(origin.accepted(), 0);
    let (code, stream) = socks_request(socks, CONNECT, Target::Name("api.corp.test"), port).await;
    assert_eq!(code, Some(0x00));
    assert!(get_over(stream, "api.corp.test", "/w")
        .await
        .ends_with("/w"));
    let seen = drain(&mut events);
    assert_eq!(
        seen[0].reason,
        Reason::Denied {
            pattern: "secret.corp.test".into()
        }
    );
    assert_eq!(seen[1].reason, Reason::NotAllowed);
}

#[tokio::test]
async fn protocol_violations_are_answered_or_closed_and_serving_goes_on() {
    let origin = Origin::start().await;
    let (proxy, _events) = test_proxy(&["allowed.test"], &[]);
    let socks = proxy.socks_addr();

    // Only username/password offered: "no acceptable methods".
    let mut s = TcpStream::connect(socks).await.unwrap();
    s.write_all(&[5, 1, 2]).await.unwrap();
    let mut reply = Vec::new();
    let _ = tokio::time::timeout(PATIENCE, s.read_to_end(&mut reply)).await;
    assert_eq!(reply, [5, 0xff]);

    // Unknown address type: reply 0x08.
    let mut s = TcpStream::connect(socks).await.unwrap();
    s.write_all(&[5, 1, 0, 5, 1, 0, 9, 1, 2, 3, 4])
        .await
        .unwrap();
    let mut reply = Vec::new();
    let _ = tokio::time::timeout(PATIENCE, s.read_to_end(&mut reply)).await;
    assert_eq!(reply.get(..4), Some([5, 0, 5, 8].as_slice()), "{reply:?}");

    // SOCKS4 and HTTP spoken to the SOCKS port: closed without a reply.
    for junk in [
        &[4u8, 1, 0, 80, 127, 0, 0, 1, 0][..],
        b"GET / HTTP/1.1\r\n\r\n",
    ] {
        let mut s = TcpStream::connect(socks).await.unwrap();
        s.write_all(junk).await.unwrap();
        let mut reply = Vec::new();
        let _ = tokio::time::timeout(PATIENCE, s.read_to_end(&mut reply)).await;
        assert!(reply.is_empty(), "{reply:?}");
    }

    let (code, stream) =
        socks_request(socks, CONNECT, Target::Name("allowed.test"), origin.port()).await;
    assert_eq!(code, Some(0x00));
    assert!(get_over(stream, "allowed.test", "/after")
        .await
        .ends_with("/after"));
}
