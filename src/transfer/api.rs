//! The transfers as library functions, on an engine.
//!
//! Each function judges its path with the engine as it stands when the
//! function is called (see [`super::judge`]), then does the file work on
//! a blocking thread, relative to handles on the judged directories.
//! Bodies stream through a bounded channel ([`super::bridge`]): neither an
//! upload nor a download is ever held in memory whole.

use std::io::{Read, Seek};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use baton_tools::files::open::{self, Dir, Found};
use bytes::Bytes;
use futures::Stream;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

use super::bridge::{self, Outgoing};
use super::digest::{self, Expected, HashingWriter, Sha256Digest};
use super::judge::{EngineJudge, Judge};
use super::walk::{self, Kind};
use super::{pack, place, TransferError, DEFAULT_MAX_BYTES};
use crate::Engine;

/// How an upload is checked and placed.
#[derive(Clone, Debug)]
pub struct UploadOptions {
    /// Largest body accepted, in bytes ([`TransferError::TooLarge`] above).
    pub max_bytes: u64,
    /// The SHA-256 the body must have; nothing is placed otherwise.
    pub expect: Option<Sha256Digest>,
    /// Permission bits for an uploaded file (e.g. `0o755`).
    pub mode: Option<u32>,
}

impl Default for UploadOptions {
    fn default() -> Self {
        UploadOptions {
            max_bytes: DEFAULT_MAX_BYTES,
            expect: None,
            mode: None,
        }
    }
}

/// What an upload placed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placed {
    /// The SHA-256 of the body received (for a directory, of the archive).
    pub digest: Sha256Digest,
    /// The body's length.
    pub bytes: u64,
    /// Entries placed: 1 for a file, the archive's members for a directory.
    pub entries: usize,
}

/// What is at a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory.
    Directory,
}

/// A path's metadata, as `HEAD` reports it.
#[derive(Clone, Debug)]
pub struct Stat {
    /// File or directory.
    pub kind: EntryKind,
    /// The path acted on (resolved: links followed).
    pub path: PathBuf,
    /// Length in bytes (0 for a directory).
    pub size: u64,
    /// The file's SHA-256 (`None` for a directory).
    pub digest: Option<Sha256Digest>,
    /// Permission bits.
    pub mode: u32,
    /// Last modification.
    pub modified: Option<SystemTime>,
}

/// A download under way: its content arrives through [`Download::write_to`]
/// or, over HTTP, [`Download::into_body`].
#[derive(Debug)]
pub struct Download {
    /// The length, when known before the content (a file).
    pub size: Option<u64>,
    /// The SHA-256, when known before the content (a file). An archive's
    /// comes after it, as a trailer.
    pub digest: Option<Sha256Digest>,
    frames: mpsc::Receiver<Outgoing>,
}

impl Download {
    /// The content as an HTTP body (data, then for an archive a trailer
    /// with its `Repr-Digest`; a failure aborts the body).
    pub fn into_body(self) -> axum::body::Body {
        bridge::body(self.frames)
    }

    /// Copies the content to `out` and checks it against the checksum that
    /// came with it; returns that checksum.
    pub async fn write_to(
        mut self,
        out: &mut (impl AsyncWrite + Unpin),
    ) -> Result<Sha256Digest, TransferError> {
        let mut hasher = digest::Hasher::default();
        let mut announced = self.digest;
        while let Some(frame) = self.frames.recv().await {
            let frame = frame.map_err(|e| TransferError::io("the download", e))?;
            match frame.into_data() {
                Ok(data) => {
                    hasher.update(&data);
                    out.write_all(&data)
                        .await
                        .map_err(|e| TransferError::io("the download's destination", e))?;
                }
                Err(frame) => {
                    let trailer = frame
                        .trailers_ref()
                        .and_then(|t| t.get(digest::DIGEST_HEADER));
                    if let Some(value) = trailer.and_then(|v| v.to_str().ok()) {
                        announced = Sha256Digest::from_header(value).map_err(TransferError::Io)?;
                    }
                }
            }
        }
        out.flush()
            .await
            .map_err(|e| TransferError::io("the download's destination", e))?;
        let actual = hasher.finish();
        match announced {
            Some(expected) if expected != actual => {
                Err(TransferError::ChecksumMismatch { expected, actual })
            }
            Some(_) => Ok(actual),
            None => Err(TransferError::Io(
                "the download ended without its checksum".into(),
            )),
        }
    }
}

/// Runs `work` with a judge and the absolute `path` on a blocking thread.
pub(crate) async fn on_blocking<T: Send + 'static>(
    engine: &Engine,
    path: &str,
    work: impl FnOnce(&EngineJudge, PathBuf) -> Result<T, TransferError> + Send + 'static,
) -> Result<T, TransferError> {
    let judge = EngineJudge::new(engine);
    let path = judge.absolute(path)?;
    tokio::task::spawn_blocking(move || work(&judge, path))
        .await
        .map_err(|e| TransferError::Io(format!("the transfer's thread failed: {e}")))?
}

/// Uploads `body` as the file at `path` (relative paths start at the
/// first workspace root), judged as a `Write` of it.
pub async fn upload_file<S, E>(
    engine: &Engine,
    path: &str,
    body: S,
    options: &UploadOptions,
) -> Result<Placed, TransferError>
where
    S: Stream<Item = Result<Bytes, E>> + Send,
    E: std::fmt::Display,
{
    upload(engine, path, body, options, false).await
}

/// Uploads the tar archive `body` as the directory at `path`, judged as a
/// `Write` of the directory and of every entry's path; a directory
/// already there is replaced whole.
pub async fn upload_dir<S, E>(
    engine: &Engine,
    path: &str,
    body: S,
    options: &UploadOptions,
) -> Result<Placed, TransferError>
where
    S: Stream<Item = Result<Bytes, E>> + Send,
    E: std::fmt::Display,
{
    upload(engine, path, body, options, true).await
}

async fn upload<S, E>(
    engine: &Engine,
    path: &str,
    body: S,
    options: &UploadOptions,
    archive: bool,
) -> Result<Placed, TransferError>
where
    S: Stream<Item = Result<Bytes, E>> + Send,
    E: std::fmt::Display,
{
    let judge = Arc::new(EngineJudge::new(engine));
    let path = judge.absolute(path)?;
    // Judged before a byte of the body is read.
    let target = {
        let judge = judge.clone();
        tokio::task::spawn_blocking(move || judge.write(&path))
            .await
            .map_err(|e| TransferError::Io(format!("the transfer's thread failed: {e}")))??
    };
    let (tx, reader) = bridge::upload(options.max_bytes);
    let options = options.clone();
    let work = tokio::task::spawn_blocking(move || {
        let expect = Expected::of(options.expect);
        if archive {
            place::dir(&target, reader, &expect, judge.as_ref())
        } else {
            place::file(&target, reader, &expect, options.mode)
        }
    });
    bridge::pump(body, tx).await;
    work.await
        .map_err(|e| TransferError::Io(format!("the transfer's thread failed: {e}")))?
}

/// What is at `path`, judged as a `Read` of it; a file's checksum is
/// computed (the file is read once).
pub async fn stat(engine: &Engine, path: &str) -> Result<Stat, TransferError> {
    on_blocking(engine, path, |judge, path| {
        let target = judge.read(&path)?;
        stat_at(&target)
    })
    .await
}

/// Whether `path` is a file or a directory, judged as a `Read` of it,
/// without reading it.
pub(crate) async fn stat_kind(engine: &Engine, path: &str) -> Result<EntryKind, TransferError> {
    on_blocking(engine, path, |judge, path| {
        let target = judge.read(&path)?;
        match find(&target)? {
            Found::File(..) => Ok(EntryKind::File),
            Found::Dir => Ok(EntryKind::Directory),
            _ => unreachable_kind(&target),
        }
    })
    .await
}

fn stat_at(target: &std::path::Path) -> Result<Stat, TransferError> {
    use std::os::unix::fs::PermissionsExt;
    let shown = |e| TransferError::io(target.display(), e);
    let (kind, meta, digest) = match find(target)? {
        Found::File(file, meta) => (
            EntryKind::File,
            meta,
            Some(digest::of_reader(file).map_err(shown)?),
        ),
        Found::Dir => {
            let meta = open::Dir::open(target)
                .and_then(|d| d.metadata(std::ffi::OsStr::new(".")))
                .map_err(shown)?;
            (EntryKind::Directory, meta, None)
        }
        _ => unreachable_kind(target)?,
    };
    Ok(Stat {
        kind,
        path: target.to_path_buf(),
        size: if kind == EntryKind::File {
            meta.len()
        } else {
            0
        },
        digest,
        mode: meta.permissions().mode() & 0o7777,
        modified: meta.modified().ok(),
    })
}

/// What is at the judged `target`; missing is [`TransferError::NotFound`].
fn find(target: &std::path::Path) -> Result<Found, TransferError> {
    let (parent, name) = match open::parent_and_name(target) {
        Ok(Some(pair)) => pair,
        Ok(None) => return Ok(Found::Dir),
        Err(e) => return Err(TransferError::Invalid(e.to_string())),
    };
    let found = match Dir::open(parent) {
        Ok(dir) => dir.find(name),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Found::Missing),
        Err(e) => Err(e),
    }
    .map_err(|e| TransferError::io(target.display(), e))?;
    match found {
        Found::Missing => Err(TransferError::NotFound(format!(
            "nothing is at `{}`",
            target.display()
        ))),
        found => Ok(found),
    }
}

fn unreachable_kind<T>(target: &std::path::Path) -> Result<T, TransferError> {
    Err(TransferError::Conflict(format!(
        "`{}` is not a regular file or a directory (a device, socket or FIFO)",
        target.display()
    )))
}

/// Downloads the file at `path`, judged as a `Read` of it. Its checksum
/// is computed first (the file is read twice), so it comes before the
/// content; a file changed in between fails the client's check.
pub async fn download_file(engine: &Engine, path: &str) -> Result<Download, TransferError> {
    let (mut file, size, digest) = on_blocking(engine, path, |judge, path| {
        let target = judge.read(&path)?;
        let shown = |e| TransferError::io(target.display(), e);
        match find(&target)? {
            Found::File(mut file, meta) => {
                let digest = digest::of_reader(&mut file).map_err(shown)?;
                file.rewind().map_err(shown)?;
                Ok((file, meta.len(), digest))
            }
            Found::Dir => Err(TransferError::Conflict(format!(
                "`{}` is a directory; ask for it as a tar archive (Accept: application/x-tar)",
                target.display()
            ))),
            _ => unreachable_kind(&target),
        }
    })
    .await?;
    let (mut writer, frames) = bridge::download();
    tokio::task::spawn_blocking(move || {
        let sent = std::io::copy(&mut (&mut file).take(size), &mut writer);
        match sent {
            Ok(n) if n == size => {
                let _ = writer.finish(None);
            }
            Ok(_) => writer.fail(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "the file shrank while it was being sent",
            )),
            Err(e) => writer.fail(e),
        }
    });
    Ok(Download {
        size: Some(size),
        digest: Some(digest),
        frames,
    })
}

/// Downloads the directory at `path` as a tar archive, judged as a `Read`
/// of it and of every entry (links are sent as links, judged as a `Read`
/// of their path). The archive's checksum follows it as a trailer.
pub async fn download_dir(engine: &Engine, path: &str) -> Result<Download, TransferError> {
    let (root, entries) = on_blocking(engine, path, |judge, path| {
        let target = judge.read(&path)?;
        let root = Dir::open(&target).map_err(|e| TransferError::io(target.display(), e))?;
        let entries = walk::walk(&root)?;
        for entry in &entries {
            let at = target.join(&entry.rel);
            if entry.kind == Kind::Other {
                return unreachable_kind(&at);
            }
            judge.read(&at)?;
        }
        Ok((root, entries))
    })
    .await?;
    let (writer, frames) = bridge::download();
    tokio::task::spawn_blocking(move || {
        let mut hashing = HashingWriter::new(writer);
        let packed = pack::pack(&root, &entries, &mut hashing);
        let (writer, digest) = hashing.finish();
        match packed {
            Ok(()) => {
                let mut trailers = axum::http::HeaderMap::new();
                if let Ok(value) = digest.header_value().parse() {
                    trailers.insert(digest::DIGEST_HEADER, value);
                }
                let _ = writer.finish(Some(trailers));
            }
            Err(e) => writer.fail(std::io::Error::other(e.to_string())),
        }
    });
    Ok(Download {
        size: None,
        digest: None,
        frames,
    })
}

/// Removes the file or directory at `path`, judged as a `Write` of it
/// (and, for a directory, of every entry). A directory that is not empty
/// needs `recursive`.
pub async fn delete(engine: &Engine, path: &str, recursive: bool) -> Result<(), TransferError> {
    on_blocking(engine, path, move |judge, path| {
        let target = judge.write(&path)?;
        if judge.is_root(&target) {
            return Err(TransferError::Conflict(format!(
                "`{}` is a workspace root, which a transfer does not remove",
                target.display()
            )));
        }
        let (parent, name) = match open::parent_and_name(&target) {
            Ok(Some(pair)) => pair,
            _ => return Err(TransferError::Conflict("`/` cannot be removed".into())),
        };
        let shown = |e| TransferError::io(target.display(), e);
        let dir = Dir::open(parent).map_err(shown)?;
        match find(&target)? {
            Found::Dir => {
                let tree = dir.child(name).map_err(shown)?;
                let entries = walk::judge_removal(&tree, &target, judge)?;
                if !entries.is_empty() && !recursive {
                    return Err(TransferError::Conflict(format!(
                        "`{}` is a directory that is not empty; pass recursive=true to remove it",
                        target.display()
                    )));
                }
                walk::remove_walked(&dir, name, &tree, &entries)
            }
            _ => {
                dir.confirm().map_err(shown)?;
                dir.remove(name).map_err(shown)
            }
        }
    })
    .await
}
