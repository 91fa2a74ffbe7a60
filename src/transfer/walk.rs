//! Directory trees, walked and removed by handle.
//!
//! Every step opens one name in a directory already held open, following
//! no link (`baton_tools::files::open::Dir`): a link in the tree is seen as
//! a link, never entered, and a directory swapped for a link during the
//! walk makes the walk fail instead of leading it elsewhere. Walks are
//! bounded in entries and depth, so neither memory nor open handles grow
//! with what a hostile tree holds.

use std::ffi::{OsStr, OsString};
use std::fs::Metadata;
use std::io;
use std::path::{Path, PathBuf};

use baton_tools::files::open::Dir;
use nix::unistd::{unlinkat, UnlinkatFlags};

use super::judge::Judge;
use super::TransferError;

/// Entries a walk (or an archive) may hold.
pub(crate) const MAX_ENTRIES: usize = 200_000;

/// Directories deep a walk (or an archive entry) may go.
pub(crate) const MAX_DEPTH: usize = 256;

/// What an entry is, found without following it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    File,
    Dir,
    Link,
    /// A device, socket or FIFO.
    Other,
}

impl Kind {
    pub(crate) fn of(meta: &Metadata) -> Kind {
        let kind = meta.file_type();
        if kind.is_symlink() {
            Kind::Link
        } else if kind.is_dir() {
            Kind::Dir
        } else if kind.is_file() {
            Kind::File
        } else {
            Kind::Other
        }
    }
}

/// One entry below the walked directory.
#[derive(Debug)]
pub(crate) struct Entry {
    /// Its path relative to the walked directory.
    pub(crate) rel: PathBuf,
    pub(crate) kind: Kind,
    /// Its own metadata (a link's, not its target's).
    pub(crate) meta: Metadata,
}

/// Every entry below `dir`, each directory before what it holds, names in
/// byte order (so the same tree always walks the same way).
pub(crate) fn walk(dir: &Dir) -> Result<Vec<Entry>, TransferError> {
    let mut out = Vec::new();
    visit(dir, Path::new(""), 1, &mut out)?;
    Ok(out)
}

fn visit(dir: &Dir, rel: &Path, depth: usize, out: &mut Vec<Entry>) -> Result<(), TransferError> {
    let shown = || dir.path().display().to_string();
    let mut names = dir
        .names(MAX_ENTRIES + 1)
        .map_err(|e| TransferError::io(shown(), e))?;
    names.sort();
    for name in names {
        let meta = dir
            .metadata(&name)
            .map_err(|e| TransferError::io(dir.path().join(&name).display(), e))?;
        let kind = Kind::of(&meta);
        let child = rel.join(&name);
        out.push(Entry {
            rel: child.clone(),
            kind,
            meta,
        });
        if out.len() > MAX_ENTRIES {
            return Err(TransferError::TooLarge(format!(
                "{} holds more than {MAX_ENTRIES} entries, more than one transfer takes",
                shown()
            )));
        }
        if kind == Kind::Dir {
            if depth >= MAX_DEPTH {
                return Err(TransferError::TooLarge(format!(
                    "{} is more than {MAX_DEPTH} directories deep",
                    dir.path().join(&name).display()
                )));
            }
            let sub = dir
                .child(&name)
                .map_err(|e| TransferError::io(dir.path().join(&name).display(), e))?;
            visit(&sub, &child, depth + 1, out)?;
        }
    }
    Ok(())
}

/// The directory at `rel` below `root` (`root` itself when `rel` is empty).
pub(crate) fn dir_at(root: &Dir, rel: &Path) -> io::Result<Dir> {
    if rel.as_os_str().is_empty() {
        root.dir_beneath(Path::new("."))
    } else {
        root.dir_beneath(rel)
    }
}

/// `rel`'s directory part and last name.
pub(crate) fn split(rel: &Path) -> (&Path, &OsStr) {
    (
        rel.parent().unwrap_or(Path::new("")),
        rel.file_name().unwrap_or(OsStr::new("")),
    )
}

/// Judges the removal of everything below `dir`, found at the judged path
/// `at`: each entry as a write of its path, each link also at its own
/// place. Returns the walk, for [`remove_walked`].
pub(crate) fn judge_removal(
    dir: &Dir,
    at: &Path,
    judge: &dyn Judge,
) -> Result<Vec<Entry>, TransferError> {
    let entries = walk(dir)?;
    for entry in &entries {
        let path = at.join(&entry.rel);
        match entry.kind {
            Kind::Link => judge.remove_link(&path)?,
            _ => judge.write_at(&path)?,
        }
    }
    Ok(entries)
}

/// Removes what [`judge_removal`] walked below `dir`, innermost first,
/// then `name` (the directory itself) from `parent`. Anything that
/// appeared meanwhile stays, and the directory with it (`ENOTEMPTY`).
pub(crate) fn remove_walked(
    parent: &Dir,
    name: &OsStr,
    dir: &Dir,
    entries: &[Entry],
) -> Result<(), TransferError> {
    for entry in entries.iter().rev() {
        let (within, last) = split(&entry.rel);
        let shown = || dir.path().join(&entry.rel).display().to_string();
        let holder = dir_at(dir, within).map_err(|e| TransferError::io(shown(), e))?;
        let flag = match entry.kind {
            Kind::Dir => UnlinkatFlags::RemoveDir,
            _ => UnlinkatFlags::NoRemoveDir,
        };
        unlinkat(&holder, last, flag).map_err(|e| TransferError::io(shown(), e.into()))?;
    }
    unlinkat(parent, name, UnlinkatFlags::RemoveDir).map_err(|e| {
        TransferError::io(
            format!(
                "{} (something was added to it while it was being removed?)",
                dir.path().display()
            ),
            e.into(),
        )
    })
}

/// Removes `name` in `parent` and everything below it, unjudged: for the
/// temporary trees a transfer made itself.
pub(crate) fn remove_all(parent: &Dir, name: &OsStr) -> io::Result<()> {
    remove_all_at(parent, name, 0)
}

fn remove_all_at(parent: &Dir, name: &OsStr, depth: usize) -> io::Result<()> {
    let meta = parent.metadata(name)?;
    if !meta.is_dir() {
        return parent.remove(name);
    }
    if depth < MAX_DEPTH {
        let dir = parent.child(name)?;
        let names: Vec<OsString> = dir.names(usize::MAX)?;
        for child in names {
            remove_all_at(&dir, &child, depth + 1)?;
        }
    }
    Ok(unlinkat(parent, name, UnlinkatFlags::RemoveDir)?)
}
