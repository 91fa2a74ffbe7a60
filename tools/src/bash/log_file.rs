//! The complete output of a command, on disk.
//!
//! The inline result keeps only a head and a tail, so the middle of a long
//! output must be somewhere the model can read it back. Foreground commands
//! open the file only once their output outgrows the inline result (most
//! commands print little, and a file per `ls` would be noise); background
//! commands open it at once, since `TaskOutput` and the host read it while
//! the command runs. The file is capped so a runaway command cannot fill
//! the disk.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

pub(crate) struct LogFile {
    path: PathBuf,
    file: Option<File>,
    written: u64,
    max_bytes: u64,
    /// Bytes kept in memory until the file is needed.
    early: Vec<u8>,
    opened: bool,
    cut: bool,
    error: Option<String>,
}

impl LogFile {
    /// A log at `path`; `eager` creates it now, otherwise on [`open`](Self::open).
    pub(crate) fn new(path: PathBuf, max_bytes: u64, eager: bool) -> Self {
        let mut log = LogFile {
            path,
            file: None,
            written: 0,
            max_bytes,
            early: Vec::new(),
            opened: false,
            cut: false,
            error: None,
        };
        if eager {
            log.open();
        }
        log
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn is_open(&self) -> bool {
        self.opened && self.error.is_none()
    }

    /// Why the file is missing or incomplete, if it is.
    pub(crate) fn problem(&self) -> Option<String> {
        if let Some(err) = &self.error {
            return Some(format!("the output file could not be written ({err})"));
        }
        if self.cut {
            return Some(format!(
                "the output file stops after its first {} bytes",
                self.max_bytes
            ));
        }
        None
    }

    /// Records `data`: in memory before the file is opened, on disk after.
    pub(crate) fn write(&mut self, data: &[u8]) {
        if !self.opened {
            self.early.extend_from_slice(data);
            return;
        }
        self.write_file(data);
    }

    /// Creates the file and flushes what was kept in memory into it.
    pub(crate) fn open(&mut self) {
        if self.opened {
            return;
        }
        self.opened = true;
        match create_unique(&self.path) {
            Ok((file, path)) => {
                self.file = Some(file);
                self.path = path;
                let early = std::mem::take(&mut self.early);
                self.write_file(&early);
            }
            Err(err) => {
                self.error = Some(err.to_string());
                self.early = Vec::new();
            }
        }
    }

    fn write_file(&mut self, data: &[u8]) {
        let Some(file) = self.file.as_mut() else {
            return;
        };
        let room = self.max_bytes.saturating_sub(self.written);
        let take = usize::try_from(room).unwrap_or(usize::MAX).min(data.len());
        if take < data.len() {
            self.cut = true;
        }
        if take == 0 {
            return;
        }
        match file.write_all(&data[..take]) {
            Ok(()) => self.written += take as u64,
            Err(err) => {
                self.error = Some(err.to_string());
                self.file = None;
            }
        }
    }
}

/// Creates `path` readable by the owner only, with its directory. An
/// existing file is another command's output (a reused call id, a nested
/// agent): it is kept, and `name-2.log`, `name-3.log`... is used instead.
fn create_unique(path: &Path) -> std::io::Result<(File, PathBuf)> {
    if let Some(dir) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let ext = path.extension().map(|e| e.to_string_lossy().into_owned());
    let mut candidate = path.to_path_buf();
    for n in 2..=1000 {
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&candidate)
        {
            Ok(file) => return Ok((file, candidate)),
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {
                let name = match &ext {
                    Some(ext) => format!("{stem}-{n}.{ext}"),
                    None => format!("{stem}-{n}"),
                };
                candidate = path.with_file_name(name);
            }
            Err(err) => return Err(err),
        }
    }
    Err(std::io::Error::other(
        "too many output files with the same name",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lazy_file_receives_what_came_before_it_opened() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shell/a.log");
        let mut log = LogFile::new(path.clone(), 1 << 20, false);
        log.write(b"one ");
        assert!(!path.exists());
        log.open();
        log.write(b"two");
        assert_eq!(std::fs::read(&path).unwrap(), b"one two");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn an_existing_log_is_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.log");
        std::fs::write(&path, b"earlier").unwrap();
        let mut log = LogFile::new(path.clone(), 100, true);
        log.write(b"later");
        assert_eq!(std::fs::read(&path).unwrap(), b"earlier");
        assert_eq!(log.path(), dir.path().join("c-2.log"));
        assert_eq!(std::fs::read(log.path()).unwrap(), b"later");
    }

    #[test]
    fn file_is_capped_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.log");
        let mut log = LogFile::new(path.clone(), 5, true);
        log.write(b"abc");
        log.write(b"defgh");
        assert_eq!(std::fs::read(&path).unwrap(), b"abcde");
        assert!(log.problem().unwrap().contains("first 5 bytes"));
    }

    #[test]
    fn unwritable_location_is_reported_not_fatal() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("file");
        std::fs::write(&blocker, b"x").unwrap();
        let mut log = LogFile::new(blocker.join("sub/c.log"), 100, true);
        log.write(b"data");
        assert!(!log.is_open());
        assert!(log.problem().unwrap().contains("could not be written"));
    }
}
