//! The one thread that writes the journal file, with group commit.
//!
//! Every record goes through this thread in the order it was sent, so the
//! file's order is the order the journal's state changed in (records are
//! sent while the state lock is held). Records that must be durable before
//! the caller goes on (a call about to start, a result about to be
//! answered) come with a waiter; the thread writes everything that is
//! queued, then syncs the file once for all the waiters it holds. Many
//! calls finishing together therefore share one `fdatasync`, which is what
//! keeps the journal's cost per call small under load.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use tokio::sync::oneshot;

/// What the thread is asked to do.
pub(crate) enum Job {
    /// Append one record; with a waiter, answer once it is on disk.
    Append {
        line: Vec<u8>,
        synced: Option<oneshot::Sender<Result<(), String>>>,
    },
    /// Replace the whole file with `contents` (compaction), atomically.
    Replace {
        contents: Vec<u8>,
        done: Option<oneshot::Sender<Result<(), String>>>,
    },
}

/// The sending end; the thread ends when it is dropped, after writing
/// everything queued.
#[derive(Debug)]
pub(crate) struct Writer {
    tx: mpsc::Sender<Job>,
}

impl Writer {
    /// Starts the thread appending to `path` (created if missing).
    pub(crate) fn start(path: &Path) -> std::io::Result<Writer> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        let (tx, rx) = mpsc::channel();
        let path = path.to_path_buf();
        std::thread::Builder::new()
            .name("baton-journal".into())
            .spawn(move || run(path, file, rx))?;
        Ok(Writer { tx })
    }

    /// Queues `job`. A thread that is gone (it cannot be: it only ends when
    /// this sender drops) answers the waiter with an error by dropping it.
    pub(crate) fn send(&self, job: Job) {
        let _ = self.tx.send(job);
    }
}

fn run(path: PathBuf, mut file: File, rx: mpsc::Receiver<Job>) {
    let mut buf = Vec::with_capacity(64 * 1024);
    let mut waiters = Vec::new();
    while let Ok(first) = rx.recv() {
        let mut next = Some(first);
        // Take everything queued now: one write and one sync for all of it.
        while let Some(job) = next.take() {
            match job {
                Job::Append { line, synced } => {
                    buf.extend_from_slice(&line);
                    waiters.extend(synced);
                }
                Job::Replace { contents, done } => {
                    // What was queued before the snapshot is in it.
                    buf.clear();
                    let result = replace(&path, &contents).and_then(|()| {
                        OpenOptions::new()
                            .append(true)
                            .open(&path)
                            .map(|f| file = f)
                    });
                    let answer = result.map_err(|e| e.to_string());
                    if let Some(done) = done {
                        let _ = done.send(answer);
                    }
                }
            }
            next = rx.try_recv().ok();
        }
        let mut outcome = Ok(());
        if !buf.is_empty() {
            outcome = file.write_all(&buf).map_err(|e| e.to_string());
            buf.clear();
            if buf.capacity() > 1 << 20 {
                buf.shrink_to(64 * 1024);
            }
        }
        if !waiters.is_empty() {
            if outcome.is_ok() {
                outcome = file.sync_data().map_err(|e| e.to_string());
            }
            for waiter in waiters.drain(..) {
                let _ = waiter.send(outcome.clone());
            }
        }
    }
}

/// Writes `contents` to a temporary file beside `path`, syncs it, renames it
/// over `path` and syncs the directory: a crash leaves the old file or the
/// new one, never half of either.
fn replace(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension("log.tmp");
    {
        let mut f = File::create(&tmp)?;
        f.write_all(contents)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)?;
    if let Some(dir) = path.parent() {
        File::open(dir)?.sync_all()?;
    }
    Ok(())
}
