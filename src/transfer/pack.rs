//! Writing a walked directory as a tar archive.
//!
//! Every entry is reached by handle from the directory that was judged,
//! following no link: files are read through `RESOLVE_BENEATH` opens,
//! links are sent as links (their target as written, never followed).
//! The same tree always gives the same bytes (names in order, no owners),
//! so a client can hash an archive before sending it and send it again.
//! A file that shrinks while it is sent fails the archive instead of
//! leaving a short entry in it.

use std::io::{self, Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use baton_tools::files::open::Dir;
use nix::fcntl::readlinkat;

use super::walk::{dir_at, split, Entry, Kind};
use super::TransferError;

/// Writes `entries` (a walk of `root`) to `out` as a tar archive. After a
/// failure `out` may hold a partial archive: the caller must abort it.
pub(crate) fn pack<W: Write>(
    root: &Dir,
    entries: &[Entry],
    out: &mut W,
) -> Result<(), TransferError> {
    let mut builder = tar::Builder::new(out);
    for entry in entries {
        let shown = || root.path().join(&entry.rel).display().to_string();
        append(&mut builder, root, entry).map_err(|e| TransferError::io(shown(), e))?;
    }
    builder
        .into_inner()
        .map(drop)
        .map_err(|e| TransferError::io(root.path().display(), e))
}

fn append<W: Write>(builder: &mut tar::Builder<W>, root: &Dir, entry: &Entry) -> io::Result<()> {
    let mut header = tar::Header::new_gnu();
    header.set_mode(entry.meta.mode() & 0o777);
    header.set_mtime(u64::try_from(entry.meta.mtime()).unwrap_or(0));
    match entry.kind {
        Kind::Dir => {
            header.set_entry_type(tar::EntryType::Directory);
            header.set_size(0);
            builder.append_data(&mut header, &entry.rel, io::empty())
        }
        Kind::File => {
            let file = root.open_file_beneath(&entry.rel)?;
            let size = file.metadata()?.len();
            header.set_entry_type(tar::EntryType::Regular);
            header.set_size(size);
            let exact = Exact {
                inner: file.take(size),
                left: size,
            };
            builder.append_data(&mut header, &entry.rel, exact)
        }
        Kind::Link => {
            let (within, name) = split(&entry.rel);
            let holder = dir_at(root, within)?;
            let target = readlinkat(&holder, name)?;
            header.set_entry_type(tar::EntryType::Symlink);
            header.set_size(0);
            builder.append_link(&mut header, &entry.rel, Path::new(&target))
        }
        Kind::Other => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a file, directory or link",
        )),
    }
}

/// Reads exactly `left` bytes, or fails.
struct Exact<R> {
    inner: R,
    left: u64,
}

impl<R: Read> Read for Exact<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n == 0 && self.left > 0 && !buf.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the file shrank while it was being sent",
            ));
        }
        self.left -= n as u64;
        Ok(n)
    }
}
