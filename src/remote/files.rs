//! Moving files to and from a worker: the client of its `/v1/files`
//! routes (`crate::transfer`).
//!
//! Everything streams from and to local files; nothing is held whole in
//! memory. Every transfer is checked end to end with SHA-256: an upload
//! announces its checksum and the worker places nothing unless what
//! arrived matches; a download is checked against the checksum the worker
//! announced (a header for a file, a trailer after an archive) before it
//! takes its local name. Downloads are placed the way the worker places
//! uploads: a temporary beside the target, renamed onto it, so a download
//! cut halfway leaves nothing behind; an archive from the worker is
//! extracted with the same refusals as one sent to it (no `..`, absolute
//! paths, escaping links or devices).
//!
//! Local paths are the caller's own choice and are not judged; they are
//! resolved once (links followed) and then opened without following any.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use futures::StreamExt;
use http_body_util::BodyExt;
use tokio::io::AsyncReadExt;

use crate::transfer::bridge::{self, BodyReader, Piece};
use crate::transfer::digest::{Expected, Sha256Digest, DIGEST_HEADER};
use crate::transfer::local;
use crate::transfer::routes::ENTRY_TYPE_HEADER;
use crate::transfer::{EntryKind, Placed, TransferError, TAR};

/// A worker's files, as its bearer sees them.
#[derive(Clone, Debug)]
pub struct WorkerFiles {
    base: reqwest::Url,
    token: Option<String>,
    http: reqwest::Client,
}

/// What a worker reports of a path (`HEAD`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoteStat {
    /// File or directory.
    pub kind: EntryKind,
    /// A file's length.
    pub size: Option<u64>,
    /// A file's SHA-256.
    pub digest: Option<Sha256Digest>,
}

impl WorkerFiles {
    /// The files of the worker at `worker` (its MCP endpoint, as given to
    /// `--remote-worker`, or any URL on it), sending `token`.
    pub fn new(worker: &str, token: Option<&str>) -> Result<WorkerFiles, TransferError> {
        let base = reqwest::Url::parse(worker)
            .map_err(|e| TransferError::Invalid(format!("the worker URL `{worker}`: {e}")))?;
        let http = reqwest::Client::builder()
            .build()
            .map_err(|e| TransferError::Io(format!("no HTTP client: {e}")))?;
        Ok(WorkerFiles {
            base,
            token: token.map(str::to_string),
            http,
        })
    }

    /// `/v1/files/{path}` on the worker, every byte but the unreserved
    /// ones percent-encoded (a `/` too, as agent-sandbox's clients do).
    fn url(&self, remote: &str) -> reqwest::Url {
        let mut encoded = String::from("/v1/files/");
        for byte in remote.bytes() {
            if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
                encoded.push(byte as char);
            } else {
                encoded.push_str(&format!("%{byte:02X}"));
            }
        }
        let mut url = self.base.clone();
        url.set_path(&encoded);
        url.set_query(None);
        url
    }

    fn request(&self, method: reqwest::Method, url: reqwest::Url) -> reqwest::RequestBuilder {
        let request = self.http.request(method, url);
        match &self.token {
            Some(token) => request.bearer_auth(token),
            None => request,
        }
    }

    /// Uploads the local file `local` to `remote`; returns its checksum,
    /// which the worker confirmed.
    pub async fn upload_file(
        &self,
        local: &Path,
        remote: &str,
    ) -> Result<Sha256Digest, TransferError> {
        let path = local.to_path_buf();
        let (digest, size) = on_thread(move || local::file_digest(&path)).await?;
        let file = tokio::fs::File::open(local)
            .await
            .map_err(|e| TransferError::io(local.display(), e))?;
        let body = reqwest::Body::wrap_stream(chunks(file));
        let request = self
            .request(reqwest::Method::PUT, self.url(remote))
            .header(reqwest::header::CONTENT_LENGTH, size)
            .header(reqwest::header::CONTENT_TYPE, "application/octet-stream")
            .header(DIGEST_HEADER, digest.header_value())
            .body(body);
        self.placed(request, digest).await
    }

    /// Uploads the local directory `local` as a tar archive to `remote`
    /// (replacing a directory there); returns the archive's checksum. The
    /// archive is made twice, once to learn its checksum and length and
    /// once to send it, so a tree that changes in between fails the
    /// worker's check and places nothing.
    pub async fn upload_dir(
        &self,
        local: &Path,
        remote: &str,
    ) -> Result<Sha256Digest, TransferError> {
        let root = local::resolve(local);
        let measured = root.clone();
        let (digest, size) = on_thread(move || local::archive_digest(&measured)).await?;
        let frames = local::archive_frames(root).await?;
        let body = reqwest::Body::wrap_stream(frames.map(|frame| {
            frame.and_then(|f| {
                f.into_data()
                    .map_err(|_| std::io::Error::other("an archive has no trailers"))
            })
        }));
        let request = self
            .request(reqwest::Method::PUT, self.url(remote))
            .header(reqwest::header::CONTENT_LENGTH, size)
            .header(reqwest::header::CONTENT_TYPE, TAR)
            .header(DIGEST_HEADER, digest.header_value())
            .body(body);
        self.placed(request, digest).await
    }

    /// Sends an upload and checks the worker received `digest`.
    async fn placed(
        &self,
        request: reqwest::RequestBuilder,
        digest: Sha256Digest,
    ) -> Result<Sha256Digest, TransferError> {
        let response = send(request).await?;
        let received = announced(response.headers())?;
        match received {
            Some(received) if received == digest => Ok(digest),
            Some(received) => Err(TransferError::ChecksumMismatch {
                expected: digest,
                actual: received,
            }),
            None => Err(TransferError::Io(
                "the worker did not say what it received (no Repr-Digest)".into(),
            )),
        }
    }

    /// Downloads the file `remote` to the local path `local` (replacing a
    /// file there); returns its checksum, checked.
    pub async fn download_file(
        &self,
        remote: &str,
        local: &Path,
    ) -> Result<Sha256Digest, TransferError> {
        let response = send(self.request(reqwest::Method::GET, self.url(remote))).await?;
        let Some(digest) = announced(response.headers())? else {
            return Err(TransferError::Io(format!(
                "the worker sent `{remote}` without its checksum (no Repr-Digest)"
            )));
        };
        let target = local::resolve(local);
        receive(response, None, move |reader| {
            local::place_file(&target, reader, &Expected::Known(digest))
        })
        .await?;
        Ok(digest)
    }

    /// Downloads the directory `remote` to the local path `local` (which
    /// must not exist, or be a directory, which is replaced); returns the
    /// archive's checksum, checked.
    pub async fn download_dir(
        &self,
        remote: &str,
        local: &Path,
    ) -> Result<Sha256Digest, TransferError> {
        let request = self
            .request(reqwest::Method::GET, self.url(remote))
            .header(reqwest::header::ACCEPT, TAR)
            .header(reqwest::header::TE, "trailers");
        let response = send(request).await?;
        let slot = Arc::new(OnceLock::new());
        let target = local::resolve(local);
        let expect = Expected::Later(slot.clone());
        receive(response, Some(slot.clone()), move |reader| {
            local::place_dir(&target, reader, &expect)
        })
        .await?;
        slot.get().copied().ok_or_else(|| {
            TransferError::Io("the archive came without its checksum trailer".into())
        })
    }

    /// What is at `remote`; `None` when nothing is.
    pub async fn stat(&self, remote: &str) -> Result<Option<RemoteStat>, TransferError> {
        let response = match send(self.request(reqwest::Method::HEAD, self.url(remote))).await {
            Ok(response) => response,
            Err(TransferError::NotFound(_)) => return Ok(None),
            Err(e) => return Err(e),
        };
        let headers = response.headers();
        let kind = match headers.get(ENTRY_TYPE_HEADER).and_then(|v| v.to_str().ok()) {
            Some("directory") => EntryKind::Directory,
            _ => EntryKind::File,
        };
        let size = headers
            .get(reqwest::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok()?.parse().ok());
        Ok(Some(RemoteStat {
            kind,
            size: (kind == EntryKind::File).then_some(size).flatten(),
            digest: announced(headers)?,
        }))
    }

    /// Removes `remote` (a directory with what it holds only if
    /// `recursive`); `false` when nothing was there.
    pub async fn delete(&self, remote: &str, recursive: bool) -> Result<bool, TransferError> {
        let mut url = self.url(remote);
        if recursive {
            url.set_query(Some("recursive=true"));
        }
        match send(self.request(reqwest::Method::DELETE, url)).await {
            Ok(_) => Ok(true),
            Err(TransferError::NotFound(_)) => Ok(false),
            Err(e) => Err(e),
        }
    }
}

/// Sends `request`; a refusal becomes the error the worker named.
async fn send(request: reqwest::RequestBuilder) -> Result<reqwest::Response, TransferError> {
    let response = request
        .send()
        .await
        .map_err(|e| TransferError::Io(format!("the worker could not be reached: {e}")))?;
    if response.status().is_success() {
        return Ok(response);
    }
    let status = response.status();
    let text = response.text().await.unwrap_or_default();
    let (code, message) = match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(body) => (
            body["code"].as_str().unwrap_or("").to_string(),
            body["message"].as_str().unwrap_or(&text).to_string(),
        ),
        Err(_) => (String::new(), text.trim().to_string()),
    };
    let message = format!("the worker answered {status}: {message}");
    Err(match (status.as_u16(), code.as_str()) {
        (401 | 403, _) => TransferError::Refused(message),
        (404, _) => TransferError::NotFound(message),
        (409, _) => TransferError::Conflict(message),
        (413, _) => TransferError::TooLarge(message),
        (_, "UNSAFE_ARCHIVE") => TransferError::UnsafeArchive(message),
        (400, _) => TransferError::Invalid(message),
        _ => TransferError::Io(message),
    })
}

/// The checksum in `headers`, if any.
fn announced(headers: &reqwest::header::HeaderMap) -> Result<Option<Sha256Digest>, TransferError> {
    match headers.get(DIGEST_HEADER).map(|v| v.to_str()) {
        None => Ok(None),
        Some(Ok(value)) => Sha256Digest::from_header(value).map_err(TransferError::Io),
        Some(Err(_)) => Err(TransferError::Io(
            "the worker's Repr-Digest is not text".into(),
        )),
    }
}

/// Streams `response`'s body into `place` (on a blocking thread); a
/// checksum trailer goes into `trailer` before the body is said to be
/// complete.
async fn receive(
    response: reqwest::Response,
    trailer: Option<Arc<OnceLock<Sha256Digest>>>,
    place: impl FnOnce(BodyReader) -> Result<Placed, TransferError> + Send + 'static,
) -> Result<Placed, TransferError> {
    let (tx, reader) = bridge::upload(u64::MAX);
    let work = tokio::task::spawn_blocking(move || place(reader));
    let mut body = axum::http::Response::<reqwest::Body>::from(response).into_body();
    loop {
        let piece = match body.frame().await {
            None => Piece::End,
            Some(Err(e)) => Piece::Fail(e.to_string()),
            Some(Ok(frame)) => match frame.into_data() {
                Ok(data) if data.is_empty() => continue,
                Ok(data) => Piece::Data(data),
                Err(frame) => {
                    let value = frame
                        .trailers_ref()
                        .and_then(|t| t.get(DIGEST_HEADER))
                        .and_then(|v| v.to_str().ok());
                    if let (Some(slot), Some(value)) = (&trailer, value) {
                        if let Ok(Some(digest)) = Sha256Digest::from_header(value) {
                            let _ = slot.set(digest);
                        }
                    }
                    continue;
                }
            },
        };
        let last = !matches!(piece, Piece::Data(_));
        if tx.send(piece).await.is_err() || last {
            break;
        }
    }
    drop(tx);
    work.await
        .map_err(|e| TransferError::Io(format!("the transfer's thread failed: {e}")))?
}

/// The contents of `file` as a stream of chunks.
fn chunks(file: tokio::fs::File) -> impl futures::Stream<Item = std::io::Result<Bytes>> {
    futures::stream::unfold(Some(file), |file| async move {
        let mut file = file?;
        let mut buf = vec![0u8; 64 * 1024];
        match file.read(&mut buf).await {
            Ok(0) => None,
            Ok(n) => {
                buf.truncate(n);
                Some((Ok(Bytes::from(buf)), Some(file)))
            }
            Err(e) => Some((Err(e), None)),
        }
    })
}

/// Runs `work` on a blocking thread.
async fn on_thread<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, TransferError> + Send + 'static,
) -> Result<T, TransferError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| TransferError::Io(format!("the transfer's thread failed: {e}")))?
}
