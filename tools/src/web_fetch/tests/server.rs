//! A tiny HTTP/1.1 server on 127.0.0.1 for WebFetch's tests: real sockets,
//! canned routes, one connection per request (`Connection: close`).

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

pub(super) const PAGE: &str = "<!DOCTYPE html><html><head><title>Test page</title>\
    <style>body { color: red; }</style><script>var hidden = 42;</script></head>\
    <body><h1>Welcome Heading</h1><p>A paragraph with <em>emphasis</em> and a \
    <a href=\"/other\">relative link</a>.</p><ul><li>apple</li><li>banana</li></ul></body></html>";

pub(super) struct Server {
    pub port: u16,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Server {
    pub(super) async fn start() -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream, port));
            }
        });
        Server { port, task }
    }

    pub(super) fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

async fn read_path(stream: &mut TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 {
            return None;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&head);
    text.split_whitespace().nth(1).map(str::to_string)
}

fn response(status: &str, headers: &[(&str, String)], body: &[u8]) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 {status}\r\nConnection: close\r\n");
    for (name, value) in headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    let mut out = out.into_bytes();
    out.extend_from_slice(body);
    out
}

fn redirect(status: &str, to: String) -> Vec<u8> {
    response(status, &[("Location", to)], b"")
}

async fn serve(mut stream: TcpStream, port: u16) {
    let Some(path) = read_path(&mut stream).await else {
        return;
    };
    let html = || ("Content-Type", "text/html; charset=utf-8".to_string());
    let reply = match path.as_str() {
        "/page" => response("200 OK", &[html()], PAGE.as_bytes()),
        "/text" => response(
            "200 OK",
            &[("Content-Type", "text/plain".to_string())],
            b"just plain text\nsecond line",
        ),
        "/json" => response(
            "200 OK",
            &[("Content-Type", "application/json".to_string())],
            br#"{"answer": 42}"#,
        ),
        "/image" => response(
            "200 OK",
            &[("Content-Type", "image/png".to_string())],
            &[0x89, b'P', b'N', b'G', 0, 1, 2],
        ),
        "/missing" => response("404 Not Found", &[html()], b"<h1>No such page</h1>"),
        "/big" => response("200 OK", &[html()], &vec![b'x'; 50_000]),
        "/big-unsized" => {
            // No Content-Length: the size is only known by reading.
            let mut out =
                b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: text/plain\r\n\r\n"
                    .to_vec();
            out.extend(std::iter::repeat_n(b'y', 50_000));
            out
        }
        "/hang" => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            return;
        }
        "/loop" => redirect("302 Found", "/loop".to_string()),
        "/elsewhere" => redirect(
            "301 Moved Permanently",
            format!("http://localhost:{port}/page"),
        ),
        "/to-ftp" => redirect("302 Found", "ftp://127.0.0.1/file".to_string()),
        p if p.starts_with("/hop/") => {
            let n: u32 = p["/hop/".len()..].parse().unwrap_or(0);
            if n == 0 {
                redirect("301 Moved Permanently", "/page".to_string())
            } else {
                redirect("302 Found", format!("/hop/{}", n - 1))
            }
        }
        _ => response("404 Not Found", &[], b"unknown route"),
    };
    let _ = stream.write_all(&reply).await;
    let _ = stream.shutdown().await;
}
