//! The size limit on a stdio server's messages, enforced as they stream.
//!
//! A frame longer than [`MAX_FRAME`] is never held: from the byte that
//! crosses the limit on, it is read and thrown away up to its newline, so
//! memory stays bounded and the connection is back in step (resync) for the
//! next message. The request it answered is not left to wait for its idle
//! limit: Baton hands rmcp an error answer for that request's id, at the
//! crossing when the id is known by then (it came first in the frame, or
//! only one request is in flight), else at the frame's end (the id came
//! last). A frame cut short (a server that wrote half a message and then the
//! next one on the same line, or a broken line) is treated the same way:
//! the whole message after it is kept, the cut one is answered with an error.
//!
//! To know which requests are in flight, the server's stdin is wrapped
//! ([`TrackedStdin`]): every request id Baton writes is remembered until an
//! answer (or a cancellation) for it passes.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use parking_lot::Mutex;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::process::ChildStdin;

use crate::frame_scan::{scan_head, tail_id};
use crate::process::{StderrRing, MAX_FRAME};

/// How much of a frame's start is kept to find its id.
const HEAD_KEEP: usize = 64 * 1024;
/// How much of a frame's end is kept to find its id.
const TAIL_KEEP: usize = 4 * 1024;
/// Ids remembered at most (requests that were never answered nor
/// cancelled are forgotten oldest first).
const MAX_IN_FLIGHT: usize = 4096;

/// The ids (as JSON text) of Baton's requests still waiting for an answer.
#[derive(Debug, Default)]
pub(crate) struct InFlight {
    ids: Mutex<VecDeque<String>>,
}

impl InFlight {
    fn add(&self, id: String) {
        let mut ids = self.ids.lock();
        if ids.len() == MAX_IN_FLIGHT {
            ids.pop_front();
        }
        ids.push_back(id);
    }

    fn remove(&self, id: &str) {
        self.ids.lock().retain(|i| i != id);
    }

    /// The one request in flight, if there is exactly one.
    fn sole(&self) -> Option<String> {
        let ids = self.ids.lock();
        (ids.len() == 1).then(|| ids[0].clone())
    }
}

/// The server's stdin, noting the id of each request written to it.
pub(crate) struct TrackedStdin {
    inner: ChildStdin,
    line: Vec<u8>,
    in_flight: Arc<InFlight>,
}

impl TrackedStdin {
    pub(crate) fn new(inner: ChildStdin, in_flight: Arc<InFlight>) -> Self {
        TrackedStdin {
            inner,
            line: Vec::new(),
            in_flight,
        }
    }

    fn observe(&mut self, written: &[u8]) {
        let mut rest = written;
        while !rest.is_empty() {
            let (part, newline) = match rest.iter().position(|b| *b == b'\n') {
                Some(i) => (&rest[..i], true),
                None => (rest, false),
            };
            let room = HEAD_KEEP.saturating_sub(self.line.len());
            self.line.extend_from_slice(&part[..part.len().min(room)]);
            rest = &rest[part.len() + usize::from(newline)..];
            if newline {
                let line = std::mem::take(&mut self.line);
                self.sent(line);
            }
        }
    }

    fn sent(&self, line: Vec<u8>) {
        let head = scan_head(&line);
        if !head.method {
            return; // an answer to the server's own request
        }
        if let Some(id) = head.id {
            self.in_flight.add(id);
        } else if line.len() < HEAD_KEEP {
            // A cancellation ends waiting for that request's answer.
            if let Ok(v) = serde_json::from_slice::<Value>(&line) {
                if v["method"] == "notifications/cancelled" {
                    if let Some(id) = v["params"].get("requestId") {
                        self.in_flight.remove(&id.to_string());
                    }
                }
            }
        }
    }
}

impl AsyncWrite for TrackedStdin {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let written = match Pin::new(&mut self.inner).poll_write(cx, buf) {
            Poll::Ready(Ok(n)) => n,
            other => return other,
        };
        self.observe(&buf[..written]);
        Poll::Ready(Ok(written))
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// A frame over the limit, being skipped.
struct Skipping {
    bytes: u64,
    tail: VecDeque<u8>,
    /// The id already answered with an error.
    refused: Option<String>,
    /// The frame is a request or notification of the server, not an answer.
    from_server: bool,
}

impl Skipping {
    fn keep_tail(&mut self, chunk: &[u8]) {
        let from = chunk.len().saturating_sub(TAIL_KEEP);
        self.tail.extend(&chunk[from..]);
        let over = self.tail.len().saturating_sub(TAIL_KEEP);
        self.tail.drain(..over);
    }
}

/// What flows from the server's stdout to rmcp.
pub(crate) struct Filter {
    pub to_rmcp: DuplexStream,
    pub ring: Arc<StderrRing>,
    pub junk: Arc<AtomicU64>,
    pub in_flight: Arc<InFlight>,
    /// Sees every answer before rmcp parses it (see [`crate::task_facts`]).
    pub facts: Arc<crate::task_facts::TaskFacts>,
}

impl Filter {
    /// Copies the server's JSON-RPC lines to rmcp until either side closes;
    /// skips non-JSON lines into the stderr ring, and enforces the frame
    /// limit (see the module docs).
    pub(crate) async fn run(mut self, stdout: impl AsyncRead + Unpin) {
        let mut reader = BufReader::with_capacity(64 * 1024, stdout);
        let mut line = Vec::new();
        let mut skipping: Option<Skipping> = None;
        while let Ok(available) = reader.fill_buf().await {
            if available.is_empty() {
                // End of output: a last line without newline still counts.
                match skipping.take() {
                    Some(s) => {
                        self.skipped(s).await;
                    }
                    None if !line.is_empty() => {
                        self.line(std::mem::take(&mut line)).await;
                    }
                    None => {}
                }
                break;
            }
            let (chunk, newline) = match available.iter().position(|b| *b == b'\n') {
                Some(i) => (&available[..i], true),
                None => (available, false),
            };
            let used = chunk.len() + usize::from(newline);
            if let Some(s) = skipping.as_mut() {
                s.bytes += chunk.len() as u64;
                s.keep_tail(chunk);
            } else if line.len() + chunk.len() > MAX_FRAME {
                let mut s = self.crossed(&line, chunk).await;
                s.keep_tail(&line[line.len().saturating_sub(TAIL_KEEP)..]);
                s.keep_tail(chunk);
                skipping = Some(s);
                line = Vec::new();
            } else {
                line.extend_from_slice(chunk);
            }
            reader.consume(used);
            if newline {
                let ok = match skipping.take() {
                    Some(s) => self.skipped(s).await,
                    None => {
                        let done = std::mem::take(&mut line);
                        self.line(done).await
                    }
                };
                if !ok {
                    break;
                }
            }
        }
        let _ = self.to_rmcp.shutdown().await;
    }

    /// The limit was crossed: refuse the answer now if its request is known.
    async fn crossed(&mut self, line: &[u8], chunk: &[u8]) -> Skipping {
        let mut head = line[..line.len().min(HEAD_KEEP)].to_vec();
        let room = HEAD_KEEP.saturating_sub(head.len());
        head.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let scanned = scan_head(&head);
        let mut refused = None;
        if !scanned.method {
            if let Some(id) = scanned.id.or_else(|| self.in_flight.sole()) {
                self.refuse(&id, &too_large()).await;
                refused = Some(id);
            }
        }
        Skipping {
            bytes: (line.len() + chunk.len()) as u64,
            tail: VecDeque::new(),
            refused,
            from_server: scanned.method,
        }
    }

    /// The end of a skipped frame: refuse it now if not done at the crossing.
    async fn skipped(&mut self, s: Skipping) -> bool {
        let tail: Vec<u8> = s.tail.into_iter().collect();
        if s.refused.is_none() && !s.from_server {
            if let Some(id) = tail_id(&tail) {
                self.refuse(&id, &too_large()).await;
            }
        }
        self.ring.push(&format!(
            "[a message of {} bytes from the server was dropped: over the {} MiB limit for one MCP message]",
            s.bytes,
            MAX_FRAME / (1024 * 1024)
        ));
        true
    }

    /// One complete line under the limit; `false` when rmcp has gone.
    async fn line(&mut self, line: Vec<u8>) -> bool {
        let first = line.iter().find(|b| !b.is_ascii_whitespace()).copied();
        match first {
            None => true,
            Some(b'{') | Some(b'[') => {
                if serde_json::from_slice::<serde::de::IgnoredAny>(&line).is_ok() {
                    self.forward(&line).await
                } else {
                    self.resync(&line).await
                }
            }
            Some(_) => {
                self.junk.fetch_add(1, Ordering::Relaxed);
                let cut = &line[..line.len().min(4096)];
                self.ring.push(&format!(
                    "[stdout, not JSON-RPC, skipped] {}",
                    String::from_utf8_lossy(cut)
                ));
                true
            }
        }
    }

    /// A line that is not valid JSON: a message cut short, perhaps with
    /// the next whole message glued to it. The whole one goes on; the cut
    /// one's request gets an error answer.
    async fn resync(&mut self, line: &[u8]) -> bool {
        let marker = b"{\"jsonrpc\"";
        let whole = (1..line.len()).rev().find(|&p| {
            line[p..].starts_with(marker)
                && serde_json::from_slice::<serde::de::IgnoredAny>(&line[p..]).is_ok()
        });
        let cut = &line[..whole.unwrap_or(line.len())];
        let head = scan_head(cut);
        if !head.method {
            if let Some(id) = head.id {
                self.refuse(
                    &id,
                    &format!("{REFUSED}: it was cut off (not valid JSON). It was dropped and the connection goes on."),
                )
                .await;
            }
        }
        self.ring.push(&format!(
            "[a cut-off message of {} bytes from the server was dropped: not valid JSON]",
            cut.len()
        ));
        match whole {
            Some(p) => self.forward(&line[p..]).await,
            None => true,
        }
    }

    async fn forward(&mut self, line: &[u8]) -> bool {
        let head = scan_head(&line[..line.len().min(HEAD_KEEP)]);
        if head.answer && !head.method {
            let id = head
                .id
                .or_else(|| tail_id(&line[line.len().saturating_sub(TAIL_KEEP)..]));
            if let Some(id) = id {
                self.in_flight.remove(&id);
            }
            self.facts.observe(line);
        }
        self.to_rmcp.write_all(line).await.is_ok() && self.to_rmcp.write_all(b"\n").await.is_ok()
    }

    /// Hands rmcp an error answer for request `id` (JSON text).
    async fn refuse(&mut self, id: &str, message: &str) {
        self.in_flight.remove(id);
        let Ok(id) = serde_json::from_str::<Value>(id) else {
            return;
        };
        let answer = serde_json::json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": -32000, "message": message},
        });
        let mut bytes = answer.to_string().into_bytes();
        bytes.push(b'\n');
        let _ = self.to_rmcp.write_all(&bytes).await;
    }
}

/// How every answer Baton refused in place of the server begins.
pub(crate) const REFUSED: &str = "Baton refused the server's answer";

fn too_large() -> String {
    format!(
        "{REFUSED}: it is larger than {} MiB ({MAX_FRAME} bytes), the limit for one MCP message. The rest of it was skipped and the connection goes on; ask the tool for less (a page, a filter) if it allows that.",
        MAX_FRAME / (1024 * 1024)
    )
}
