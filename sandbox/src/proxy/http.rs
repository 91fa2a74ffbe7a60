//! The HTTP front end: `CONNECT host:port` tunnels and absolute-form
//! requests (`GET http://host/path HTTP/1.1`) forwarded in origin form.
//!
//! One request per client connection: after a forwarded response (or a
//! tunnel) the connection closes. That keeps a client from sending a second
//! request down a connection the proxy opened for a different host.

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::event::Protocol;
use super::gate::{Gate, Refusal};
use super::host::Host;
use super::http_head::{read_head, HeadError, RequestHead};
use super::server::{linger_close, relay, Limits};

/// Headers that describe one hop, never forwarded (RFC 9110 §7.6.1), plus
/// the proxy's own credentials.
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "proxy-connection",
    "keep-alive",
    "proxy-authorization",
    "proxy-authenticate",
    "te",
    "trailer",
    "upgrade",
    "host",
];

/// Serves one client connection.
pub(crate) async fn serve<S>(mut client: S, gate: &Gate, limits: &Limits)
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    let (head, rest) = match read_head(&mut client, limits.max_head, limits.head_timeout).await {
        Ok(read) => read,
        Err(HeadError::Closed | HeadError::Io) => return,
        Err(HeadError::Bad(why)) => return respond(&mut client, 400, "Bad Request", why).await,
        Err(HeadError::TooLarge) => {
            return respond(
                &mut client,
                431,
                "Request Header Fields Too Large",
                "request head too large",
            )
            .await
        }
        Err(HeadError::Timeout) => {
            return respond(&mut client, 408, "Request Timeout", "request head too slow").await
        }
    };
    if head.method == "CONNECT" {
        tunnel(client, gate, limits, &head, rest).await
    } else {
        forward(client, gate, &head, rest).await
    }
}

async fn tunnel<S>(mut client: S, gate: &Gate, limits: &Limits, head: &RequestHead, rest: Vec<u8>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    let (host, port) = match parse_authority(&head.target, None) {
        Ok(target) => target,
        Err(why) => return respond(&mut client, 400, "Bad Request", why).await,
    };
    let mut upstream = match gate.open(&host, port, Protocol::HttpConnect).await {
        Ok(stream) => stream,
        Err(refusal) => return refuse(&mut client, &host, port, refusal).await,
    };
    // Bytes the client sent right after the head (an eager TLS hello)
    // belong to the tunnel.
    let established = b"HTTP/1.1 200 Connection established\r\n\r\n";
    relay(&mut client, &mut upstream, established, &rest, limits).await;
}

async fn forward<S>(mut client: S, gate: &Gate, head: &RequestHead, rest: Vec<u8>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    let (host, port, path) = match parse_absolute_url(&head.target) {
        Ok(target) => target,
        Err(why) => return respond(&mut client, 400, "Bad Request", why).await,
    };
    let body_len = match body_length(head) {
        Ok(len) => len,
        Err((status, reason, why)) => return respond(&mut client, status, reason, why).await,
    };
    let mut upstream = match gate.open(&host, port, Protocol::HttpForward).await {
        Ok(stream) => stream,
        Err(refusal) => return refuse(&mut client, &host, port, refusal).await,
    };
    let out_head = origin_form_head(head, &host, port, &path);
    let early = &rest[..rest
        .len()
        .min(usize::try_from(body_len).unwrap_or(usize::MAX))];
    if upstream.write_all(&out_head).await.is_err() || upstream.write_all(early).await.is_err() {
        return respond(
            &mut client,
            502,
            "Bad Gateway",
            "upstream closed the connection",
        )
        .await;
    }
    let (mut client_r, mut client_w) = tokio::io::split(client);
    let (mut up_r, mut up_w) = upstream.split();
    // Exactly the declared body goes up; anything after it is ignored.
    let remaining = body_len - early.len() as u64;
    let upload = async {
        let mut body = (&mut client_r).take(remaining);
        let _ = tokio::io::copy(&mut body, &mut up_w).await;
        // Leave the upstream write side open: some servers treat a
        // half-close as an aborted request.
        std::future::pending::<()>().await
    };
    let download = tokio::io::copy(&mut up_r, &mut client_w);
    tokio::select! {
        _ = upload => {}
        _ = download => {}
    }
    let _ = client_w.shutdown().await;
}

/// The declared body length: Content-Length, or 0. Chunked uploads are
/// refused (411) because forwarding them safely needs a chunk parser, and
/// framing is exactly where request smuggling hides.
fn body_length(head: &RequestHead) -> Result<u64, (u16, &'static str, &'static str)> {
    if head.values("transfer-encoding").next().is_some() {
        return Err((
            411,
            "Length Required",
            "chunked request bodies are not supported; send Content-Length",
        ));
    }
    let mut lengths = head.values("content-length");
    let Some(first) = lengths.next() else {
        return Ok(0);
    };
    let bad = (400, "Bad Request", "invalid Content-Length");
    if lengths.any(|other| other != first)
        || first.is_empty()
        || !first.iter().all(u8::is_ascii_digit)
    {
        return Err(bad);
    }
    std::str::from_utf8(first)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or(bad)
}

/// The request line and headers sent upstream: origin form, the URL's host
/// as `Host`, hop-by-hop headers (and those `Connection` names) removed,
/// and `Connection: close` since each client connection carries one request.
fn origin_form_head(head: &RequestHead, host: &Host, port: u16, path: &str) -> Vec<u8> {
    let named_by_connection: Vec<String> = head
        .values("connection")
        .flat_map(|v| v.split(|b| *b == b','))
        .map(|token| String::from_utf8_lossy(token).trim().to_ascii_lowercase())
        .collect();
    let mut out = Vec::with_capacity(512);
    out.extend_from_slice(format!("{} {} {}\r\n", head.method, path, head.version).as_bytes());
    out.extend_from_slice(format!("Host: {}\r\n", authority(host, port)).as_bytes());
    for (name, value) in &head.headers {
        let lower = name.to_ascii_lowercase();
        if HOP_BY_HOP.contains(&lower.as_str()) || named_by_connection.contains(&lower) {
            continue;
        }
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"Connection: close\r\n\r\n");
    out
}

fn authority(host: &Host, port: u16) -> String {
    let host = match host {
        Host::Ip(std::net::IpAddr::V6(v6)) => format!("[{v6}]"),
        other => other.to_string(),
    };
    if port == 80 {
        host
    } else {
        format!("{host}:{port}")
    }
}

/// Splits `host[:port]` (IPv6 in brackets). `default` is used when the port
/// is absent; `None` makes the port mandatory (CONNECT).
fn parse_authority(text: &str, default: Option<u16>) -> Result<(Host, u16), &'static str> {
    if text.contains('@') {
        return Err("user information in the authority is not accepted");
    }
    let (host, port) = match text.rfind(':') {
        // A colon inside brackets belongs to an IPv6 address, not a port.
        Some(i) if !text[i..].contains(']') => (&text[..i], Some(&text[i + 1..])),
        _ => (text, None),
    };
    let port = match (port, default) {
        (Some(p), _) => parse_port(p)?,
        (None, Some(d)) => d,
        (None, None) => return Err("CONNECT needs host:port"),
    };
    let host = Host::parse(host).map_err(|_| "invalid host name")?;
    Ok((host, port))
}

fn parse_port(text: &str) -> Result<u16, &'static str> {
    if text.is_empty() || text.len() > 5 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err("invalid port");
    }
    match text.parse::<u16>() {
        Ok(0) | Err(_) => Err("invalid port"),
        Ok(port) => Ok(port),
    }
}

/// Splits `http://authority/path?query` into host, port and origin form.
fn parse_absolute_url(target: &str) -> Result<(Host, u16, String), &'static str> {
    let Some(scheme_end) = target.find("://") else {
        return Err("a proxy request needs an absolute URL (http://host/path)");
    };
    let scheme = &target[..scheme_end];
    if scheme.eq_ignore_ascii_case("https") {
        return Err("https URLs go through CONNECT, not as a plain request");
    }
    if !scheme.eq_ignore_ascii_case("http") {
        return Err("only http URLs can be forwarded");
    }
    let after = &target[scheme_end + 3..];
    let auth_end = after.find(['/', '?', '#']).unwrap_or(after.len());
    let (host, port) = parse_authority(&after[..auth_end], Some(80))?;
    let mut path = after[auth_end..].to_string();
    if let Some(hash) = path.find('#') {
        // Fragments never go on the wire.
        path.truncate(hash);
    }
    if !path.starts_with('/') {
        path.insert(0, '/');
    }
    Ok((host, port, path))
}

/// Answers a refused or failed target.
async fn refuse<S: AsyncRead + AsyncWrite + Unpin>(
    client: &mut S,
    host: &Host,
    port: u16,
    refusal: Refusal,
) {
    let (status, reason, why) = match refusal {
        Refusal::Policy(reason) => (403, "Forbidden", reason.to_string()),
        Refusal::Unresolvable(reason) => (502, "Bad Gateway", reason.to_string()),
        Refusal::Connect(e) => (502, "Bad Gateway", format!("connection failed: {e}")),
    };
    let body = format!("{host}:{port} {why}");
    respond(client, status, reason, &body).await
}

/// Writes a short plain-text answer; the connection then closes.
async fn respond<S: AsyncRead + AsyncWrite + Unpin>(
    client: &mut S,
    status: u16,
    reason: &str,
    why: &str,
) {
    let body = format!("Baton sandbox proxy: {why}\n");
    let text = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = client.write_all(text.as_bytes()).await;
    linger_close(client).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authorities() {
        let ok = |t: &str, d| parse_authority(t, d).map(|(h, p)| (h.to_string(), p));
        assert_eq!(ok("a.test:443", None), Ok(("a.test".into(), 443)));
        assert_eq!(ok("[::1]:8080", None), Ok(("::1".into(), 8080)));
        assert_eq!(
            ok("[2001:db8::1]", Some(80)),
            Ok(("2001:db8::1".into(), 80))
        );
        assert_eq!(ok("A.Test", Some(80)), Ok(("a.test".into(), 80)));
        for bad in [
            "a.test",
            "a.test:0",
            "a.test:65536",
            "a.test:+1",
            "u@a.test:1",
            ":443",
            "a test:1",
        ] {
            assert!(parse_authority(bad, None).is_err(), "{bad}");
        }
    }

    #[test]
    fn absolute_urls() {
        let ok = |t: &str| parse_absolute_url(t).map(|(h, p, path)| (h.to_string(), p, path));
        assert_eq!(
            ok("http://a.test/x?y=1"),
            Ok(("a.test".into(), 80, "/x?y=1".into()))
        );
        assert_eq!(
            ok("HTTP://a.test:8080"),
            Ok(("a.test".into(), 8080, "/".into()))
        );
        assert_eq!(
            ok("http://a.test?q"),
            Ok(("a.test".into(), 80, "/?q".into()))
        );
        assert_eq!(
            ok("http://a.test/p#frag"),
            Ok(("a.test".into(), 80, "/p".into()))
        );
        for bad in [
            "/x",
            "https://a.test/",
            "ftp://a.test/",
            "http://allowed.test@evil.test/",
            "http:///x",
        ] {
            assert!(parse_absolute_url(bad).is_err(), "{bad}");
        }
    }
}
