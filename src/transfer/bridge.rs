//! Between HTTP bodies, which are async streams of chunks, and the code
//! that reads and writes files, which blocks.
//!
//! A body is never collected: chunks pass through a small bounded channel,
//! so at most [`DEPTH`] chunks of a transfer are in memory at once, and a
//! slow disk slows the sender down instead of filling memory.
//!
//! An upload's end must be told apart from its loss. The side that reads
//! the request body sends an explicit [`Piece::End`] when the body is
//! complete; if that side goes away first (the client closed the
//! connection, so the server dropped the request), the channel closes
//! without it and the reader fails, so whatever was being written is
//! removed instead of placed.

use std::io::{self, Read, Write};

use bytes::Bytes;
use futures::{Stream, StreamExt};
use http_body::Frame;
use tokio::sync::mpsc;

use super::TransferError;

/// Chunks in flight between the two sides.
pub(crate) const DEPTH: usize = 8;

/// Bytes an outgoing chunk holds before it is sent.
const CHUNK: usize = 64 * 1024;

/// What the async side hands the blocking reader.
#[derive(Debug)]
pub(crate) enum Piece {
    Data(Bytes),
    /// The body is complete.
    End,
    /// Reading the body failed (the connection broke); the text says how.
    Fail(String),
}

/// A channel for one upload: the sender for [`pump`], the reader for the
/// blocking side, which refuses more than `max` bytes.
pub(crate) fn upload(max: u64) -> (mpsc::Sender<Piece>, BodyReader) {
    let (tx, rx) = mpsc::channel(DEPTH);
    let reader = BodyReader {
        rx,
        current: Bytes::new(),
        ended: false,
        received: 0,
        max,
    };
    (tx, reader)
}

/// Forwards `body` to the blocking side, then says it is complete. Stops
/// early, quietly, when the blocking side has stopped reading (it failed,
/// and its error is the answer).
pub(crate) async fn pump<S, E>(body: S, tx: mpsc::Sender<Piece>)
where
    S: Stream<Item = Result<Bytes, E>>,
    E: std::fmt::Display,
{
    let mut body = std::pin::pin!(body);
    while let Some(item) = body.next().await {
        let piece = match item {
            Ok(bytes) if bytes.is_empty() => continue,
            Ok(bytes) => Piece::Data(bytes),
            Err(e) => {
                let _ = tx.send(Piece::Fail(e.to_string())).await;
                return;
            }
        };
        if tx.send(piece).await.is_err() {
            return;
        }
    }
    let _ = tx.send(Piece::End).await;
}

/// The body as a blocking reader.
#[derive(Debug)]
pub(crate) struct BodyReader {
    rx: mpsc::Receiver<Piece>,
    current: Bytes,
    ended: bool,
    received: u64,
    max: u64,
}

impl Read for BodyReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if !self.current.is_empty() {
                let n = buf.len().min(self.current.len());
                buf[..n].copy_from_slice(&self.current.split_to(n));
                return Ok(n);
            }
            if self.ended {
                return Ok(0);
            }
            match self.rx.blocking_recv() {
                Some(Piece::Data(bytes)) => {
                    self.received += bytes.len() as u64;
                    if self.received > self.max {
                        return Err(TransferError::TooLarge(format!(
                            "the body is larger than the limit of {} bytes; nothing was placed",
                            self.max
                        ))
                        .into_io());
                    }
                    self.current = bytes;
                }
                Some(Piece::End) => self.ended = true,
                Some(Piece::Fail(why)) => {
                    return Err(TransferError::Cut(format!(
                        "the body broke off after {} bytes ({why}); nothing was placed",
                        self.received
                    ))
                    .into_io())
                }
                None => {
                    return Err(TransferError::Cut(format!(
                        "the body broke off after {} bytes (the client went away); \
                         nothing was placed",
                        self.received
                    ))
                    .into_io())
                }
            }
        }
    }
}

/// What a response body is made of: data, then maybe trailers; an error
/// aborts the response (the client sees a body cut short).
pub(crate) type Outgoing = Result<Frame<Bytes>, io::Error>;

/// A channel for one download: the writer for the blocking side, the
/// receiver for the response body.
pub(crate) fn download() -> (FrameWriter, mpsc::Receiver<Outgoing>) {
    let (tx, rx) = mpsc::channel(DEPTH);
    let writer = FrameWriter {
        tx,
        buf: Vec::with_capacity(CHUNK),
    };
    (writer, rx)
}

/// The response body as a blocking writer, in chunks of [`CHUNK`] bytes.
#[derive(Debug)]
pub(crate) struct FrameWriter {
    tx: mpsc::Sender<Outgoing>,
    buf: Vec<u8>,
}

impl FrameWriter {
    fn send(&self, frame: Outgoing) -> io::Result<()> {
        self.tx.blocking_send(frame).map_err(|_| {
            io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the client went away before the download ended",
            )
        })
    }

    /// Sends what is buffered, then `trailers`, ending the body.
    pub(crate) fn finish(mut self, trailers: Option<axum::http::HeaderMap>) -> io::Result<()> {
        self.flush()?;
        if let Some(trailers) = trailers {
            self.send(Ok(Frame::trailers(trailers)))?;
        }
        Ok(())
    }

    /// Aborts the body: the client sees it cut short rather than complete.
    pub(crate) fn fail(self, err: io::Error) {
        let _ = self.send(Err(err));
    }
}

impl Write for FrameWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let room = CHUNK - self.buf.len();
        let n = room.min(data.len());
        self.buf.extend_from_slice(&data[..n]);
        if self.buf.len() == CHUNK {
            self.flush()?;
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let chunk = std::mem::replace(&mut self.buf, Vec::with_capacity(CHUNK));
        self.send(Ok(Frame::data(Bytes::from(chunk))))
    }
}

/// The frames `rx` receives, as a response body.
pub(crate) fn body(mut rx: mpsc::Receiver<Outgoing>) -> axum::body::Body {
    let frames = futures::stream::poll_fn(move |cx| rx.poll_recv(cx));
    axum::body::Body::new(http_body_util::StreamBody::new(frames))
}
