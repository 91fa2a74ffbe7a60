//! Shared pieces of the proxy tests: a tiny origin HTTP server on
//! 127.0.0.1, proxies wired to a fixed resolver, and raw-socket clients;
//! and running bash confined ([`confined`]) for the kernel's tests.
#![allow(dead_code)]

pub mod confined;

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use baton_sandbox::proxy::{DomainRules, Proxy, ProxyEvent, StaticResolver};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

/// Generous bound for anything that should happen quickly.
pub const PATIENCE: Duration = Duration::from_secs(20);

pub const LOOPBACK: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);

/// An HTTP origin server that answers each request with a body naming the
/// path (and echoing a request body), and records every request head.
pub struct Origin {
    pub addr: SocketAddr,
    pub heads: Arc<Mutex<Vec<String>>>,
    pub bodies: Arc<Mutex<Vec<Vec<u8>>>>,
    pub accepted: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Origin {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Origin {
    pub async fn start() -> Origin {
        Origin::start_on("127.0.0.1:0")
            .await
            .expect("bind origin on 127.0.0.1")
    }

    pub async fn start_on(addr: &str) -> std::io::Result<Origin> {
        let listener = TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let heads = Arc::new(Mutex::new(Vec::new()));
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let accepted = Arc::new(AtomicUsize::new(0));
        let (h, b, a) = (heads.clone(), bodies.clone(), accepted.clone());
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                a.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(answer(stream, h.clone(), b.clone()));
            }
        });
        Ok(Origin {
            addr,
            heads,
            bodies,
            accepted,
            task,
        })
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    pub fn last_head(&self) -> String {
        self.heads
            .lock()
            .unwrap()
            .last()
            .cloned()
            .unwrap_or_default()
    }

    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

async fn answer(
    mut stream: TcpStream,
    heads: Arc<Mutex<Vec<String>>>,
    bodies: Arc<Mutex<Vec<Vec<u8>>>>,
) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let end = loop {
        if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break pos + 4;
        }
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
    let length: usize = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse().ok())?
        })
        .unwrap_or(0);
    let mut body = buf[end..].to_vec();
    while body.len() < length {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => body.extend_from_slice(&chunk[..n]),
        }
    }
    let path = head.split(' ').nth(1).unwrap_or("?").to_string();
    heads.lock().unwrap().push(head);
    bodies.lock().unwrap().push(body.clone());
    let mut reply = format!("hello from origin: {path}").into_bytes();
    if !body.is_empty() {
        reply.extend_from_slice(b" body=");
        reply.extend_from_slice(&body);
    }
    let mut out = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        reply.len()
    )
    .into_bytes();
    out.extend_from_slice(&reply);
    let _ = stream.write_all(&out).await;
    let _ = stream.shutdown().await;
}

/// The names every test resolver knows: all on loopback, where the origin
/// listens.
pub fn test_resolver() -> StaticResolver {
    let names = [
        "allowed.test",
        "other.test",
        "corp.test",
        "api.corp.test",
        "deep.api.corp.test",
        "secret.corp.test",
    ];
    names
        .iter()
        .fold(StaticResolver::new(), |r, name| r.with(name, [LOOPBACK]))
}

pub fn rules(allow: &[&str], deny: &[&str]) -> DomainRules {
    DomainRules::new(allow, deny).expect("test patterns are valid")
}

/// A proxy with the test resolver and the loopback test knob, reporting
/// events into a roomy channel.
pub fn test_proxy(allow: &[&str], deny: &[&str]) -> (Proxy, mpsc::Receiver<ProxyEvent>) {
    let (tx, rx) = mpsc::channel(256);
    let proxy = Proxy::builder(rules(allow, deny))
        .resolver(test_resolver())
        .allow_loopback_targets_for_tests(true)
        .events(tx)
        .start()
        .expect("proxy starts");
    (proxy, rx)
}

/// Sends raw bytes, then reads until the server closes.
pub async fn exchange(addr: SocketAddr, request: &[u8]) -> String {
    let run = async {
        let mut stream = TcpStream::connect(addr).await.expect("connect to proxy");
        stream.write_all(request).await.expect("send request");
        let mut out = Vec::new();
        let _ = stream.read_to_end(&mut out).await;
        String::from_utf8_lossy(&out).into_owned()
    };
    tokio::time::timeout(PATIENCE, run)
        .await
        .expect("exchange finishes")
}

/// The status code of a raw HTTP response.
pub fn status(response: &str) -> u16 {
    response
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0)
}

/// Reads one HTTP response head (up to the blank line) from a stream.
pub async fn read_head(stream: &mut TcpStream) -> String {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        match tokio::time::timeout(PATIENCE, stream.read(&mut byte)).await {
            Ok(Ok(1)) => buf.push(byte[0]),
            _ => break,
        }
    }
    String::from_utf8_lossy(&buf).into_owned()
}

/// Collects the events already sent, without waiting for more.
pub fn drain(rx: &mut mpsc::Receiver<ProxyEvent>) -> Vec<ProxyEvent> {
    let mut out = Vec::new();
    while let Ok(event) = rx.try_recv() {
        out.push(event);
    }
    out
}

/// A SOCKS5 target address.
pub enum Target<'a> {
    Name(&'a str),
    Ip(IpAddr),
}

/// Runs the SOCKS5 handshake and a request with `command`; returns the
/// method reply, the request's reply code (None if the proxy closed) and
/// the stream.
pub async fn socks_request(
    proxy: SocketAddr,
    command: u8,
    target: Target<'_>,
    port: u16,
) -> (Option<u8>, TcpStream) {
    let mut stream = TcpStream::connect(proxy)
        .await
        .expect("connect to socks proxy");
    stream.write_all(&[5, 1, 0]).await.expect("send greeting");
    let mut method = [0u8; 2];
    tokio::time::timeout(PATIENCE, stream.read_exact(&mut method))
        .await
        .expect("method reply in time")
        .expect("method reply");
    assert_eq!(method, [5, 0], "no-auth method chosen");
    let mut request = vec![5, command, 0];
    match target {
        Target::Name(name) => {
            request.push(3);
            request.push(name.len() as u8);
            request.extend_from_slice(name.as_bytes());
        }
        Target::Ip(IpAddr::V4(v4)) => {
            request.push(1);
            request.extend_from_slice(&v4.octets());
        }
        Target::Ip(IpAddr::V6(v6)) => {
            request.push(4);
            request.extend_from_slice(&v6.octets());
        }
    }
    request.extend_from_slice(&port.to_be_bytes());
    stream.write_all(&request).await.expect("send request");
    let mut reply = [0u8; 10];
    let code = match tokio::time::timeout(PATIENCE, stream.read_exact(&mut reply)).await {
        Ok(Ok(_)) => {
            assert_eq!(reply[0], 5, "reply version");
            Some(reply[1])
        }
        _ => None,
    };
    (code, stream)
}

/// Sends a GET over an open tunnel and reads the whole response.
pub async fn get_over(mut stream: TcpStream, host: &str, path: &str) -> String {
    let request = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .await
        .expect("send GET in tunnel");
    let mut out = Vec::new();
    let _ = tokio::time::timeout(PATIENCE, stream.read_to_end(&mut out)).await;
    String::from_utf8_lossy(&out).into_owned()
}
