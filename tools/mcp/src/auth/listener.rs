//! The loopback redirect listener: the authorization server sends the
//! browser back to `http://localhost:PORT/callback?code=..&state=..`, and
//! this one-shot HTTP listener on 127.0.0.1 picks the code up. Only the
//! loopback interface is bound, so nothing off the machine can reach it;
//! the `state` check (done by rmcp) rejects a callback from another flow.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Largest request head read from the browser.
const MAX_HEAD: usize = 16 * 1024;

pub(super) struct Redirect {
    listener: TcpListener,
    port: u16,
}

impl Redirect {
    /// Listens on 127.0.0.1:`port` (0: any free port).
    pub(super) async fn bind(port: Option<u16>) -> Result<Redirect, String> {
        let listener = TcpListener::bind(("127.0.0.1", port.unwrap_or(0)))
            .await
            .map_err(|e| format!("cannot listen for the OAuth redirect on 127.0.0.1: {e}"))?;
        let port = listener
            .local_addr()
            .map_err(|e| format!("OAuth redirect listener: {e}"))?
            .port();
        Ok(Redirect { listener, port })
    }

    pub(super) fn uri(&self) -> String {
        super::settings::OAuthSettings::redirect_uri(self.port)
    }

    /// Waits up to `limit` for the callback; returns its full URL. Other
    /// requests (a favicon, a wrong path) get a 404 and the wait goes on.
    pub(super) async fn wait(self, limit: Duration) -> Result<String, String> {
        let waited = tokio::time::timeout(limit, async {
            loop {
                let Ok((stream, _)) = self.listener.accept().await else {
                    continue;
                };
                if let Some(result) = self.serve(stream).await {
                    return result;
                }
            }
        })
        .await;
        waited.unwrap_or_else(|_| {
            Err(format!(
                "nobody completed the login within {} s",
                limit.as_secs()
            ))
        })
    }

    /// One request; `None` when it was not the callback.
    async fn serve(&self, mut stream: TcpStream) -> Option<Result<String, String>> {
        let mut head = Vec::new();
        let mut buf = [0u8; 2048];
        let read = tokio::time::timeout(Duration::from_secs(10), async {
            while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_HEAD {
                match stream.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
        })
        .await;
        if read.is_err() {
            return None;
        }
        let line = String::from_utf8_lossy(&head);
        let target = line
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("GET "))
            .and_then(|l| l.split(' ').next())
            .unwrap_or("");
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        if path != "/callback" {
            respond(&mut stream, "404 Not Found", "Not found.").await;
            return None;
        }
        let url = format!("http://localhost:{}{target}", self.port);
        let pairs: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes())
            .into_owned()
            .collect();
        let get = |k: &str| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        if let Some(error) = get("error") {
            respond(&mut stream, "400 Bad Request", "Login failed; see Baton.").await;
            let detail = get("error_description").unwrap_or_default();
            return Some(Err(format!(
                "the authorization server refused: {error} {detail}"
            )));
        }
        if get("code").is_none() {
            respond(&mut stream, "400 Bad Request", "No authorization code.").await;
            return None;
        }
        respond(
            &mut stream,
            "200 OK",
            "Login complete. You can close this window and return to Baton.",
        )
        .await;
        Some(Ok(url))
    }
}

async fn respond(stream: &mut TcpStream, status: &str, body: &str) {
    let text = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(text.as_bytes()).await;
    let _ = stream.shutdown().await;
}
