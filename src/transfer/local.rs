//! The client's own side of a transfer: local files and trees, which the
//! caller chose and which are therefore not judged, handled with the same
//! code the worker uses (archives made and extracted by handle, placement
//! through a temporary).

use std::path::{Path, PathBuf};

use baton_tools::files::open::{Dir, Found};
use futures::Stream;

use super::bridge::{self, BodyReader};
use super::digest::{self, Expected, HashingWriter, Sha256Digest};
use super::judge::Unjudged;
use super::{pack, place, walk, Placed, TransferError};

/// `path` made absolute (from the working directory), with `..` folded
/// and links followed: the place every later open reaches without
/// following any link.
pub(crate) fn resolve(path: &Path) -> PathBuf {
    let absolute = match std::env::current_dir() {
        Ok(cwd) => cwd.join(path),
        Err(_) => path.to_path_buf(),
    };
    baton_engine::paths::resolve(&absolute)
}

/// The checksum and length of the regular file at `path`.
pub(crate) fn file_digest(path: &Path) -> Result<(Sha256Digest, u64), TransferError> {
    let target = resolve(path);
    let shown = |e| TransferError::io(target.display(), e);
    let (parent, name) = match baton_tools::files::open::parent_and_name(&target) {
        Ok(Some(pair)) => pair,
        _ => {
            return Err(TransferError::Invalid(format!(
                "`{}` is not a file",
                target.display()
            )))
        }
    };
    match Dir::open(parent)
        .and_then(|dir| dir.find(name))
        .map_err(shown)?
    {
        Found::File(file, meta) => Ok((digest::of_reader(file).map_err(shown)?, meta.len())),
        Found::Missing => Err(TransferError::NotFound(format!(
            "nothing is at `{}`",
            target.display()
        ))),
        _ => Err(TransferError::Invalid(format!(
            "`{}` is not a regular file",
            target.display()
        ))),
    }
}

/// The directory at `root` (resolved), open, and its walk; a device or
/// socket in it is refused.
fn walked(root: &Path) -> Result<(Dir, Vec<walk::Entry>), TransferError> {
    let dir = Dir::open(root).map_err(|e| TransferError::io(root.display(), e))?;
    let entries = walk::walk(&dir)?;
    if let Some(odd) = entries.iter().find(|e| e.kind == walk::Kind::Other) {
        return Err(TransferError::Conflict(format!(
            "`{}` is a device, socket or FIFO, which an archive does not carry",
            root.join(&odd.rel).display()
        )));
    }
    Ok((dir, entries))
}

/// The checksum and length of the archive of the directory `root`
/// (resolved), made without keeping it.
pub(crate) fn archive_digest(root: &Path) -> Result<(Sha256Digest, u64), TransferError> {
    let (dir, entries) = walked(root)?;
    let mut sink = HashingWriter::new(Counting(0));
    pack::pack(&dir, &entries, &mut sink)?;
    let (counted, digest) = sink.finish();
    Ok((digest, counted.0))
}

/// The archive of the directory `root` (resolved), made on a blocking
/// thread as it is read.
pub(crate) async fn archive_frames(
    root: PathBuf,
) -> Result<impl Stream<Item = Result<http_body::Frame<bytes::Bytes>, std::io::Error>>, TransferError>
{
    let (dir, entries) = tokio::task::spawn_blocking(move || walked(&root))
        .await
        .map_err(|e| TransferError::Io(format!("the transfer's thread failed: {e}")))??;
    let (mut writer, mut frames) = bridge::download();
    tokio::task::spawn_blocking(move || match pack::pack(&dir, &entries, &mut writer) {
        Ok(()) => {
            let _ = writer.finish(None);
        }
        Err(e) => writer.fail(std::io::Error::other(e.to_string())),
    });
    Ok(futures::stream::poll_fn(move |cx| frames.poll_recv(cx)))
}

/// Places the file `reader` brings at `target` (resolved).
pub(crate) fn place_file(
    target: &Path,
    reader: BodyReader,
    expect: &Expected,
) -> Result<Placed, TransferError> {
    place::file(target, reader, expect, None)
}

/// Extracts the archive `reader` brings to `target` (resolved).
pub(crate) fn place_dir(
    target: &Path,
    reader: BodyReader,
    expect: &Expected,
) -> Result<Placed, TransferError> {
    place::dir(target, reader, expect, &Unjudged)
}

/// Counts what is written, and drops it.
struct Counting(u64);

impl std::io::Write for Counting {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
