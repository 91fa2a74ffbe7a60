//! What the model has seen of each file, kept per session.
//!
//! Writing a file the model has not read, or one that changed since it read
//! it, overwrites work the model never saw (the user's edit in the editor, a
//! formatter's rewrite, another agent's change). So Read records a snapshot of
//! every file it shows — content hash, size, mtime — and the writing tools
//! refuse to replace a file whose current content does not match its snapshot.
//!
//! The content hash decides: an mtime bump with identical content (`touch`, a
//! formatter that changed nothing) does not force a re-read, while a change
//! within the mtime granularity is still caught. Files too large for Read to
//! scan whole have no hash; their size, mtime and inode stand in. Files are
//! keyed by their resolved path, so reading through a symlink and editing the
//! target match.

use std::collections::HashMap;
use std::fs::Metadata;
use std::io::{self, Read as _};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use baton_engine::{Session, ToolError};
use parking_lot::Mutex;
use sha2::{Digest, Sha256};

use super::open::{self, Found};

/// One file as the model last saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileSnapshot {
    /// SHA-256 of the content; `None` when the file was too large to scan.
    pub hash: Option<[u8; 32]>,
    /// Length in bytes when it was seen.
    pub size: u64,
    /// Modification time when it was seen, where the file system has one.
    pub mtime: Option<SystemTime>,
    /// (device, inode): Baton's atomic writes always make a new inode.
    pub inode: (u64, u64),
}

impl FileSnapshot {
    /// A snapshot of `bytes`, the whole content of the file `meta` describes.
    pub fn of(bytes: &[u8], meta: &Metadata) -> Self {
        FileSnapshot::new(Some(hash(bytes)), bytes.len() as u64, meta)
    }

    /// A snapshot from a hash computed elsewhere (`None`: too large to hash).
    pub fn new(hash: Option<[u8; 32]>, size: u64, meta: &Metadata) -> Self {
        FileSnapshot {
            hash,
            size,
            mtime: meta.modified().ok(),
            inode: (meta.dev(), meta.ino()),
        }
    }

    /// Whether the file (now `bytes`, described by `meta`) is what was seen.
    fn matches(&self, bytes: &[u8], meta: &Metadata) -> bool {
        match self.hash {
            Some(seen) => hash(bytes) == seen,
            None => {
                self.size == meta.len()
                    && self.mtime == meta.modified().ok()
                    && self.inode == (meta.dev(), meta.ino())
            }
        }
    }
}

/// The session slot: resolved path → last snapshot shown to (or written by)
/// the model.
#[derive(Default, Debug)]
pub struct ReadState {
    files: Mutex<HashMap<PathBuf, FileSnapshot>>,
}

impl ReadState {
    /// The session's read state (created empty on first use).
    pub fn of(session: &Session) -> std::sync::Arc<ReadState> {
        session.slots().get_or_default::<ReadState>()
    }

    /// Remembers `snapshot` as what the model last saw of `path`.
    pub fn record(&self, path: PathBuf, snapshot: FileSnapshot) {
        self.files.lock().insert(path, snapshot);
    }

    /// What the model last saw of `path`, if it read or wrote it.
    pub fn get(&self, path: &Path) -> Option<FileSnapshot> {
        self.files.lock().get(path).cloned()
    }

    /// Every file seen, for saving the session (baton's `session_state`).
    pub fn entries(&self) -> Vec<(PathBuf, FileSnapshot)> {
        let files = self.files.lock();
        files.iter().map(|(p, s)| (p.clone(), s.clone())).collect()
    }
}

/// The SHA-256 of `bytes`, as snapshots hold it.
pub fn hash(bytes: &[u8]) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(bytes);
    finish(hasher)
}

/// Streaming hash for files read in chunks.
pub fn hasher() -> Sha256 {
    Sha256::new()
}

/// The digest of a streaming [`hasher`], as snapshots hold it.
pub fn finish(hasher: Sha256) -> [u8; 32] {
    let mut out = [0u8; 32];
    out.copy_from_slice(&hasher.finalize());
    out
}

/// The current state of a file a writing tool is about to replace.
#[derive(Debug)]
pub enum Existing {
    /// Nothing there yet: no read is required.
    Absent,
    /// There, read by the model, and unchanged since.
    Unchanged {
        /// The file's content, as read for the check.
        bytes: Vec<u8>,
        /// Its metadata at that read (permissions to keep on replacing it).
        meta: Metadata,
    },
}

/// Loads the file at `real` and checks the read-before-write rule.
/// `verb` names the operation in messages ("write", "edit").
pub fn load_for_update(
    session: &Session,
    real: &Path,
    shown: &str,
    verb: &str,
) -> Result<Existing, ToolError> {
    // Found without following a link (see `open`): what is read here is
    // the judged file, in the directory the write will go to.
    let (mut file, meta) = match open::find(real) {
        Ok(Found::File(file, meta)) => (file, meta),
        Ok(Found::Missing) => return Ok(Existing::Absent),
        Ok(Found::Dir) => {
            return Err(ToolError::new(format!(
                "{shown} is a directory, not a file; nothing was changed. Give the path of a file inside it."
            )))
        }
        Ok(Found::Other) => {
            return Err(ToolError::new(format!(
                "{shown} is not a regular file (a device, socket or pipe); refusing to {verb} it."
            )))
        }
        Err(e) => return Err(io_error(&e, shown, verb)),
    };
    let Some(seen) = ReadState::of(session).get(real) else {
        return Err(ToolError::new(format!(
            "{shown} already exists and has not been read in this session. \
             Read it first, then {verb} it; nothing was changed."
        )));
    };
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|e| io_error(&e, shown, "read"))?;
    if !seen.matches(&bytes, &meta) {
        return Err(ToolError::new(format!(
            "{shown} has changed since you last read it (by the user, a formatter or another \
             tool{}). Read it again to see its current content, then retry; nothing was changed.",
            describe_change(&seen, bytes.len() as u64, meta.modified().ok())
        )));
    }
    Ok(Existing::Unchanged { bytes, meta })
}

fn describe_change(seen: &FileSnapshot, size: u64, mtime: Option<SystemTime>) -> String {
    let mut parts = Vec::new();
    if seen.size != size {
        parts.push(format!("size {} → {} bytes", seen.size, size));
    }
    if let (Some(before), Some(now)) = (seen.mtime, mtime) {
        if before != now {
            parts.push("modification time changed".to_string());
        }
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("; {}", parts.join(", "))
    }
}

/// An I/O failure on `shown`, worded for the model.
pub fn io_error(err: &io::Error, shown: &str, action: &str) -> ToolError {
    // Reads change nothing anyway; for writes the model must know that the
    // failure left the file as it was.
    let unchanged = if matches!(action, "read" | "inspect") {
        ""
    } else {
        " Nothing was changed."
    };
    if open::is_changed(err) {
        return ToolError::new(format!(
            "Could not {action} {shown}: {err}.{unchanged} If the change is expected, call \
             again to judge the path as it is now."
        ));
    }
    let text = match err.kind() {
        io::ErrorKind::PermissionDenied => format!(
            "Permission denied: this process may not {action} {shown}.{unchanged} Check the \
             file's permissions or ask the user."
        ),
        io::ErrorKind::NotFound => format!("{shown} does not exist (could not {action} it)."),
        _ => format!("Could not {action} {shown}: {err}.{unchanged}"),
    };
    ToolError::new(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Tests run as root cannot provoke EACCES with file modes, so the wording
    // of that path is checked directly.
    #[test]
    fn permission_errors_are_worded_for_the_model() {
        let err = io::Error::from(io::ErrorKind::PermissionDenied);
        let text = io_error(&err, "/w/f.txt", "read").message;
        assert!(
            text.contains("Permission denied") && text.contains("/w/f.txt"),
            "{text}"
        );
        let err = io::Error::other("disk on fire");
        assert!(io_error(&err, "/w/f", "write")
            .message
            .contains("disk on fire"));
    }

    #[test]
    fn load_for_update_knows_absent_unread_and_changed_files() {
        let dir = tempfile::tempdir().unwrap();
        let session = Session::new("s", dir.path());
        let path = dir.path().join("f");
        assert!(matches!(
            load_for_update(&session, &path, "f", "write"),
            Ok(Existing::Absent)
        ));
        std::fs::write(&path, "a").unwrap();
        let err = load_for_update(&session, &path, "f", "write").unwrap_err();
        assert!(err.message.contains("has not been read"));
        let meta = std::fs::metadata(&path).unwrap();
        ReadState::of(&session).record(path.clone(), FileSnapshot::of(b"a", &meta));
        assert!(matches!(
            load_for_update(&session, &path, "f", "write"),
            Ok(Existing::Unchanged { .. })
        ));
        std::fs::write(&path, "b").unwrap();
        let err = load_for_update(&session, &path, "f", "write").unwrap_err();
        assert!(err.message.contains("changed since"), "{}", err.message);
    }
}
