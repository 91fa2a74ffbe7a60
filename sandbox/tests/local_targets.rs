//! By default the proxy refuses every address local to the host, even for
//! an allowed name and even for an IP literal a pattern names.

use std::net::IpAddr;

use baton_sandbox::proxy::{
    host_interface_addresses, LocalKind, Proxy, Reason, StaticResolver, SystemResolver,
};
use support::*;
use tokio::sync::mpsc;

use crate::support;

/// A non-loopback address of this host, if it has one.
fn own_address() -> Option<IpAddr> {
    host_interface_addresses()
        .ok()?
        .iter()
        .copied()
        .find(|ip| baton_sandbox::proxy::classify_range(*ip).is_none())
}

#[tokio::test]
async fn the_default_refuses_local_addresses_of_allowed_names() {
    let origin = Origin::start().await;
    let port = origin.port();
    let mut resolver = StaticResolver::new()
        .with("loop.test", [LOOPBACK])
        .with("loop6.test", ["::1".parse().unwrap()])
        .with("mapped.test", ["::ffff:127.0.0.1".parse().unwrap()])
        .with("metadata.test", ["169.254.169.254".parse().unwrap()])
        .with("linklocal6.test", ["fe80::1".parse().unwrap()])
        .with("zero.test", ["0.0.0.0".parse().unwrap()])
        .with("multicast.test", ["224.0.0.1".parse().unwrap()])
        // A public answer mixed with a local one refuses the whole name.
        .with("mixed.test", ["192.0.2.10".parse().unwrap(), LOOPBACK]);
    let mut expected = vec![
        ("loop.test", LocalKind::Loopback),
        ("loop6.test", LocalKind::Loopback),
        ("mapped.test", LocalKind::Loopback),
        ("metadata.test", LocalKind::LinkLocal),
        ("linklocal6.test", LocalKind::LinkLocal),
        ("zero.test", LocalKind::Unspecified),
        ("multicast.test", LocalKind::Multicast),
        ("mixed.test", LocalKind::Loopback),
        ("127.0.0.1", LocalKind::Loopback),
        ("::1", LocalKind::Loopback),
        ("169.254.1.2", LocalKind::LinkLocal),
    ];
    let own = own_address();
    let own_text = own.map(|ip| ip.to_string());
    if let Some(ip) = own {
        resolver = resolver.with("self.test", [ip]);
        expected.push(("self.test", LocalKind::HostInterface));
    }
    // Every name and literal is allowed: only the address filter refuses.
    let mut allow: Vec<&str> = expected.iter().map(|(host, _)| *host).collect();
    if let Some(text) = &own_text {
        allow.push(text);
        expected.push((text, LocalKind::HostInterface));
    }
    let (tx, mut events) = mpsc::channel(256);
    let proxy = Proxy::builder(rules(&allow, &[]))
        .resolver(resolver)
        .events(tx)
        .start()
        .unwrap();
    for (host, kind) in &expected {
        let authority = if host.contains(':') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        };
        let response = exchange(
            proxy.http_addr(),
            format!("CONNECT {authority} HTTP/1.1\r\n\r\n").as_bytes(),
        )
        .await;
        assert_eq!(status(&response), 403, "{host}: {response}");
        assert!(
            response.contains("resolves to a local address"),
            "{host}: {response}"
        );
        let (code, _) = socks_request(proxy.socks_addr(), 1, target(host), port).await;
        assert_eq!(code, Some(0x02), "{host} over SOCKS5");
        let seen = drain(&mut events);
        assert_eq!(seen.len(), 2, "{host}: {seen:?}");
        for event in seen {
            assert!(!event.allowed);
            assert!(
                matches!(event.reason, Reason::LocalAddress { kind: k, .. } if k == *kind),
                "{host}: {:?}",
                event.reason
            );
        }
    }
    assert_eq!(origin.accepted(), 0, "nothing reached the local origin");
}

fn target(host: &str) -> Target<'_> {
    match host.parse::<IpAddr>() {
        Ok(ip) => Target::Ip(ip),
        Err(_) => Target::Name(host),
    }
}

#[tokio::test]
async fn the_system_resolver_answer_for_localhost_is_refused() {
    let origin = Origin::start().await;
    let proxy = Proxy::start(rules(&["localhost"], &[]), SystemResolver).unwrap();
    let request = format!("GET http://localhost:{}/ HTTP/1.1\r\n\r\n", origin.port());
    let response = exchange(proxy.http_addr(), request.as_bytes()).await;
    assert_eq!(status(&response), 403, "{response}");
    assert!(response.contains("localhost:"), "{response}");
    assert!(
        response.contains("resolves to a local address"),
        "{response}"
    );
    let (code, _) = socks_request(
        proxy.socks_addr(),
        1,
        Target::Name("localhost"),
        origin.port(),
    )
    .await;
    assert_eq!(code, Some(0x02));
    assert_eq!(origin.accepted(), 0);
}

#[tokio::test]
async fn the_test_knob_admits_loopback_only() {
    let origin = Origin::start().await;
    let resolver = test_resolver().with("metadata.test", ["169.254.169.254".parse().unwrap()]);
    let proxy = Proxy::builder(rules(&["allowed.test", "metadata.test"], &[]))
        .resolver(resolver)
        .allow_loopback_targets_for_tests(true)
        .start()
        .unwrap();
    let ok = exchange(
        proxy.http_addr(),
        format!(
            "GET http://allowed.test:{}/ HTTP/1.1\r\n\r\n",
            origin.port()
        )
        .as_bytes(),
    )
    .await;
    assert_eq!(status(&ok), 200, "{ok}");
    let refused = exchange(
        proxy.http_addr(),
        b"GET http://metadata.test/ HTTP/1.1\r\n\r\n",
    )
    .await;
    assert_eq!(status(&refused), 403, "{refused}");
}
