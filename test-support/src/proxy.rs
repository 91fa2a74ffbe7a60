//! A TCP proxy the tests put between a client and a server, to break the
//! network on purpose: cut every connection, refuse new ones for a while,
//! swallow the server's replies while passing the client's requests on, or
//! point at another server.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

pub struct Proxy {
    pub addr: SocketAddr,
    shared: Arc<Shared>,
    accept: JoinHandle<()>,
}

struct Shared {
    upstream: Mutex<SocketAddr>,
    mute: AtomicBool,
    /// While set, new connections are closed as soon as they come.
    down: AtomicBool,
    connections: Mutex<Vec<JoinHandle<()>>>,
}

impl Proxy {
    /// Listens on 127.0.0.1 and forwards every connection to `upstream`.
    /// Must be called inside a tokio runtime.
    pub async fn start(upstream: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Shared {
            upstream: Mutex::new(upstream),
            mute: AtomicBool::new(false),
            down: AtomicBool::new(false),
            connections: Mutex::new(Vec::new()),
        });
        let accept = {
            let shared = shared.clone();
            tokio::spawn(async move {
                while let Ok((client, _)) = listener.accept().await {
                    if shared.down.load(Ordering::SeqCst) {
                        drop(client);
                        continue;
                    }
                    let task = tokio::spawn(relay(client, shared.clone()));
                    shared.connections.lock().unwrap().push(task);
                }
            })
        };
        Proxy {
            addr,
            shared,
            accept,
        }
    }

    /// `url` with its host and port replaced by the proxy's.
    pub fn url_for(&self, url: &str) -> String {
        let rest = url.split_once("://").map_or(url, |(_, r)| r);
        let path = rest.find('/').map_or("", |i| &rest[i..]);
        format!("http://{}{path}", self.addr)
    }

    /// New connections go to `upstream`.
    pub fn set_upstream(&self, upstream: SocketAddr) {
        *self.shared.upstream.lock().unwrap() = upstream;
    }

    /// While on, what the worker sends is read and dropped: requests still
    /// arrive, answers never do (a partition in one direction).
    pub fn mute_replies(&self, on: bool) {
        self.shared.mute.store(on, Ordering::SeqCst);
    }

    /// Closes every open connection (both sides see it end); says how
    /// many were open.
    pub fn cut(&self) -> usize {
        let tasks = std::mem::take(&mut *self.shared.connections.lock().unwrap());
        let open = tasks.iter().filter(|t| !t.is_finished()).count();
        for task in tasks {
            task.abort();
        }
        open
    }

    /// Cuts every connection and refuses new ones for `outage`, as a
    /// network outage would; says how many were open.
    pub async fn cut_for(&self, outage: std::time::Duration) -> usize {
        self.shared.down.store(true, Ordering::SeqCst);
        let open = self.cut();
        tokio::time::sleep(outage).await;
        self.shared.down.store(false, Ordering::SeqCst);
        open
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.accept.abort();
        self.cut();
    }
}

/// The address in a worker URL such as `http://127.0.0.1:4321/mcp`.
pub fn addr_of(url: &str) -> SocketAddr {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let hostport = rest.split('/').next().unwrap_or(rest);
    hostport.parse().unwrap()
}

async fn relay(client: TcpStream, shared: Arc<Shared>) {
    let upstream = *shared.upstream.lock().unwrap();
    let Ok(server) = TcpStream::connect(upstream).await else {
        return;
    };
    let (mut cr, mut cw) = client.into_split();
    let (mut sr, mut sw) = server.into_split();
    let up = async {
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            match cr.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if sw.write_all(&buf[..n]).await.is_err() {
                        break;
                    }
                }
            }
        }
        let _ = sw.shutdown().await;
    };
    let down = async {
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            match sr.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if shared.mute.load(Ordering::SeqCst) {
                        continue;
                    }
                    if cw.write_all(&buf[..n]).await.is_err() {
                        break;
                    }
                }
            }
        }
        let _ = cw.shutdown().await;
    };
    tokio::join!(up, down);
}
