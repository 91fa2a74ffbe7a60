//! A session's state on disk, so that a new process can resume it.
//!
//! What a session learns while it runs lives in memory: the shell's working
//! directory after `cd`, which files the model read (Edit's read-before-write
//! and staleness checks), the rules an approver said to remember, the
//! deferred tools ToolSearch loaded, and the background tasks. A host that
//! restarts (a crash, a deploy) would otherwise start over: the model's
//! history says it read `main.rs`, yet Edit refuses it.
//!
//! The state is one JSON file, [`STATE_FILE`], in the session's state
//! directory, written whole to a temporary file and renamed over the old
//! one, so a reader (or a resume after SIGKILL) sees either the old or the
//! new state, never half of one. It carries a [`VERSION`]; a file of another
//! version, or one that does not parse, is an error naming the file, never
//! a guess. Processes do not survive a restart: a task that was running is
//! reported lost by the resumed session ([`ResumeReport::lost_tasks`]).
//!
//! - [`capture`]: reading the state out of a running engine and putting it
//!   back into a new one.

mod capture;

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use capture::ResumeReport;
pub(crate) use capture::{check_root, restore};

/// The file in the state directory.
pub const STATE_FILE: &str = "session.json";

/// The format version this Baton writes and reads.
pub const VERSION: u64 = 1;

/// Everything a resumed session gets back.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionState {
    /// The format version ([`VERSION`] when this Baton wrote it).
    pub version: u64,
    /// The id of the saved session; the resumed one keeps it.
    pub session_id: String,
    /// The process that wrote the file: a resume refuses while it runs.
    pub pid: u32,
    /// The workspace the session started in (its first root): the
    /// permission rules were judged against it.
    pub root: PathBuf,
    /// The working directory the next message starts in.
    pub cwd: PathBuf,
    /// The files the model had read, so that Edit and Write go on without a
    /// new Read of unchanged files.
    pub files_read: Vec<FileRead>,
    /// Session rules (remembered approvals, hooks' `addRules`).
    pub rules: Vec<SavedRule>,
    /// Deferred tools the model loaded, in load order.
    pub loaded_tools: Vec<String>,
    /// The background tasks the session had when the file was written.
    pub tasks: Vec<TaskRecord>,
}

/// One file as the model last saw it (see `baton_tools::files::read_state`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileRead {
    /// The file's resolved absolute path.
    pub path: PathBuf,
    /// SHA-256 of the content in hex; absent for files too large to hash.
    pub sha256: Option<String>,
    /// Its length in bytes.
    pub size: u64,
    /// Modification time since the Unix epoch: seconds and nanoseconds.
    pub mtime: Option<(u64, u32)>,
    /// The device of its inode (see `inode`).
    pub dev: u64,
    /// Its inode number: with `dev`, tells a replaced file from the one read.
    pub ino: u64,
}

/// A session permission rule, as saved.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SavedRule {
    /// `allow`, `ask` or `deny`.
    pub behavior: String,
    /// The rule as written, e.g. `Bash(npm test:*)`.
    pub rule: String,
}

/// A task as it was listed when the state was written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskRecord {
    /// The task id.
    pub id: String,
    /// `shell`, `monitor`, `agent` or `session`, as in the task list.
    pub kind: String,
    /// As in the task list, or `lost`: it was running when its process
    /// ended, and nothing of it runs now.
    pub status: String,
    /// What the task runs (the command or the agent's task).
    pub description: String,
    /// Where its output was written, when it had a file.
    pub output_file: Option<PathBuf>,
    /// How its process exited, if it had when the state was written.
    pub exit_code: Option<i32>,
}

/// Why a saved state could not be used or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StateError {
    /// There is no state file at this path.
    #[error("no saved session state at {0} (was the session started with this state directory?)")]
    Missing(PathBuf),
    /// The state file could not be read.
    #[error("cannot read the session state {0}: {1}")]
    Read(PathBuf, #[source] std::io::Error),
    /// The state file is not valid JSON of this format (serde's message).
    #[error("the session state {0} is corrupt: {1}")]
    Corrupt(PathBuf, String),
    /// The state file was written in another format version.
    #[error("the session state {path} has version {found}; this Baton reads version {VERSION}")]
    Version {
        /// The state file.
        path: PathBuf,
        /// The version it says it has.
        found: String,
    },
    /// The saved session's process still runs.
    #[error("session {id} is still running in process {pid}; stop it before resuming it")]
    StillRunning {
        /// The session's id.
        id: String,
        /// The process that runs it.
        pid: u32,
    },
    /// The state file could not be written.
    #[error("cannot write the session state {0}: {1}")]
    Write(PathBuf, #[source] std::io::Error),
    /// The saved state does not fit the session it is restored into (the
    /// message says how).
    #[error("{0}")]
    Mismatch(String),
}

impl SessionState {
    /// Reads the state saved in `state_dir`.
    pub fn load(state_dir: &Path) -> Result<SessionState, StateError> {
        let path = state_dir.join(STATE_FILE);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(StateError::Missing(path))
            }
            Err(e) => return Err(StateError::Read(path, e)),
        };
        let value: Value = serde_json::from_slice(&bytes)
            .map_err(|e| StateError::Corrupt(path.clone(), e.to_string()))?;
        // The version first: a newer format is "upgrade Baton", not a list
        // of fields this one does not know.
        match value.get("version") {
            Some(v) if v.as_u64() == Some(VERSION) => {}
            Some(v) => {
                return Err(StateError::Version {
                    path,
                    found: v.to_string(),
                })
            }
            None => return Err(StateError::Corrupt(path, "no `version` field".into())),
        }
        serde_path_to_error::deserialize(value).map_err(|e| {
            let at = e.path().to_string();
            StateError::Corrupt(path, format!("at `{at}`: {}", e.inner()))
        })
    }

    /// Refuses a state whose writer still runs: two processes writing one
    /// session would each undo the other's changes. (A pid reused by an
    /// unrelated process also refuses; the message says which one.)
    pub fn check_not_running(&self) -> Result<(), StateError> {
        let proc_dir = Path::new("/proc").join(self.pid.to_string());
        // A zombie (ended, not yet reaped by its parent) runs nothing.
        let zombie = std::fs::read_to_string(proc_dir.join("stat")).is_ok_and(|stat| {
            stat.rsplit(')')
                .next()
                .is_some_and(|rest| rest.trim_start().starts_with('Z'))
        });
        let alive = proc_dir.exists() && !zombie;
        if alive && self.pid != std::process::id() {
            return Err(StateError::StillRunning {
                id: self.session_id.clone(),
                pid: self.pid,
            });
        }
        Ok(())
    }

    /// The file's text (what [`write_atomic`] writes).
    pub fn to_text(&self) -> String {
        // Serializing plain data cannot fail; fall back to an empty object
        // rather than panic, which `load` then reports as corrupt.
        serde_json::to_string_pretty(self).unwrap_or_else(|_| "{}".into())
    }
}

/// Replaces `state_dir/session.json` with `text`: a temporary file in the
/// same directory, flushed to disk, then renamed, so that a reader sees the
/// old file or the new one whole.
pub fn write_atomic(state_dir: &Path, text: &str) -> Result<(), StateError> {
    let path = state_dir.join(STATE_FILE);
    let fail = |e| StateError::Write(path.clone(), e);
    std::fs::create_dir_all(state_dir).map_err(fail)?;
    let tmp = state_dir.join(format!(".{STATE_FILE}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&tmp, &path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(fail)
}

#[cfg(test)]
mod tests;
