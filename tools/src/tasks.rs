//! The task list: everything of a session that runs on after the call that
//! started it — background shells, monitors and interactive sessions —
//! listed, stopped and read through one interface.
//!
//! Shells and monitors are records of the session's [`BackgroundTasks`]
//! registry; interactive sessions live in their own store (their output
//! is read by `write_stdin`, not from a file) and are listed beside them.
//! Ids do not collide: `shell-N` / `monitor-N` against numeric session ids.
//!
//! Whenever the list changes (a task starts or ends), the session sends a
//! `tasks_changed` notification carrying the whole list: a level signal,
//! so a host that missed one is brought up to date by the next.

use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::time::Duration;

use baton_engine::{CancelReason, Notification, Session};
use serde::Serialize;
use serde_json::json;

use crate::bash::BackgroundTasks;
use crate::exec::ExecSessions;

/// Bytes of output a host's look at a task returns.
pub const TAIL_BYTES: usize = 8 * 1024;

/// One task as the host sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TaskInfo {
    /// The task id (`TaskOutput`/`TaskStop` take it).
    pub id: String,
    /// `shell`, `monitor`, `agent` (a background subagent) or `session`.
    pub kind: String,
    /// `running`, `completed`, `failed`, `stopped`, `timed_out`, or
    /// `exited` (a session whose end the model has not read yet).
    pub status: String,
    /// The command.
    pub description: String,
    /// Where the task's whole output is written, when it has a file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_file: Option<PathBuf>,
    /// How the task's process exited, once it has.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Milliseconds since it started.
    pub runtime_ms: u64,
}

/// The end of a task's output.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OutputTail {
    /// The task id.
    pub id: String,
    /// The last [`TAIL_BYTES`] bytes (lossy UTF-8).
    pub tail: String,
    /// Bytes of output in all.
    pub total_bytes: u64,
    /// Whether `tail` is not the whole output.
    pub truncated: bool,
}

/// Every task of `session`: shells and monitors by id, then sessions.
pub fn list(session: &Session) -> Vec<TaskInfo> {
    let mut tasks = Vec::new();
    if let Some(registry) = session.slots().get::<BackgroundTasks>() {
        for task in registry.all() {
            let finish = task.finish();
            tasks.push(TaskInfo {
                id: task.id.clone(),
                kind: task.kind.to_string(),
                status: finish.as_ref().map_or("running", |f| f.status).to_string(),
                description: task.command.clone(),
                output_file: Some(task.log_path.clone()),
                exit_code: finish.and_then(|f| f.exit_code),
                runtime_ms: millis(task.started.elapsed()),
            });
        }
    }
    if let Some(store) = session.slots().get::<ExecSessions>() {
        for s in store.all() {
            let exit = s.exit_code();
            tasks.push(TaskInfo {
                id: s.id.to_string(),
                kind: "session".into(),
                status: if exit.is_some() { "exited" } else { "running" }.into(),
                description: s.command.clone(),
                output_file: None,
                exit_code: exit,
                runtime_ms: millis(s.started.elapsed()),
            });
        }
    }
    tasks
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn find(session: &Session, id: &str) -> Option<TaskInfo> {
    list(session).into_iter().find(|t| t.id == id)
}

/// Why a task could not be stopped or its output read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TaskError {
    /// No task of the session has this id.
    #[error("{}", unknown_text(.id, .known))]
    Unknown {
        /// The id asked for.
        id: String,
        /// The ids the session has, for the message.
        known: Vec<String>,
    },
    /// The task's output file is there but cannot be read.
    #[error("the output file {} cannot be read: {source}", .path.display())]
    Output {
        /// The output file.
        path: PathBuf,
        /// Why it cannot be read.
        #[source]
        source: std::io::Error,
    },
}

fn unknown_text(id: &str, known: &[String]) -> String {
    if known.is_empty() {
        format!("no task `{id}`: the session has no tasks")
    } else {
        format!("no task `{id}`; known tasks: {}", known.join(", "))
    }
}

fn unknown(session: &Session, id: &str) -> TaskError {
    TaskError::Unknown {
        id: id.to_string(),
        known: list(session).into_iter().map(|t| t.id).collect(),
    }
}

/// Stops task `id` with all its processes and waits (bounded) until it
/// has ended; returns how it is listed then.
pub async fn stop(session: &Session, id: &str) -> Result<TaskInfo, TaskError> {
    if let Some(task) = session
        .slots()
        .get::<BackgroundTasks>()
        .and_then(|r| r.get(id))
    {
        task.request_stop(CancelReason::Other("stopped by the host".into()));
        let _ = tokio::time::timeout(Duration::from_secs(10), task.finished()).await;
    } else if let Some(s) = id
        .parse::<i32>()
        .ok()
        .and_then(|n| session.slots().get::<ExecSessions>()?.get(n))
    {
        s.request_stop();
        let _ = tokio::time::timeout(Duration::from_secs(10), s.ended()).await;
        let info = find(session, id);
        if let Some(store) = session.slots().get::<ExecSessions>() {
            store.remove(s.id);
        }
        changed(session);
        return info.ok_or_else(|| unknown(session, id));
    } else {
        return Err(unknown(session, id));
    }
    find(session, id).ok_or_else(|| unknown(session, id))
}

/// The end of task `id`'s output: from its output file, or for an
/// interactive session from memory.
pub fn output_tail(session: &Session, id: &str) -> Result<OutputTail, TaskError> {
    let Some(info) = find(session, id) else {
        return Err(unknown(session, id));
    };
    if let Some(path) = &info.output_file {
        return file_tail(id, path);
    }
    let store = session.slots().get::<ExecSessions>();
    let Some(s) = id.parse::<i32>().ok().and_then(|n| store?.get(n)) else {
        return Err(unknown(session, id));
    };
    let (recent, total) = s.recent_output();
    Ok(OutputTail {
        id: id.to_string(),
        tail: String::from_utf8_lossy(&recent).into_owned(),
        total_bytes: total,
        truncated: total > recent.len() as u64,
    })
}

fn file_tail(id: &str, path: &std::path::Path) -> Result<OutputTail, TaskError> {
    let failed = |source: std::io::Error| TaskError::Output {
        path: path.to_path_buf(),
        source,
    };
    let empty = OutputTail {
        id: id.to_string(),
        tail: String::new(),
        total_bytes: 0,
        truncated: false,
    };
    let mut file = match std::fs::File::open(path) {
        Ok(f) => f,
        // Nothing written yet.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(empty),
        Err(e) => return Err(failed(e)),
    };
    let total = file.metadata().map_err(failed)?.len();
    let start = total.saturating_sub(TAIL_BYTES as u64);
    file.seek(SeekFrom::Start(start)).map_err(failed)?;
    let mut bytes = Vec::with_capacity(TAIL_BYTES);
    file.take(TAIL_BYTES as u64)
        .read_to_end(&mut bytes)
        .map_err(failed)?;
    Ok(OutputTail {
        tail: String::from_utf8_lossy(&bytes).into_owned(),
        total_bytes: total,
        truncated: start > 0,
        ..empty
    })
}

/// Tells the host the list changed, with the whole list.
pub fn changed(session: &Session) {
    let tasks = list(session);
    let running = tasks.iter().filter(|t| t.status == "running").count();
    session.notify(Notification {
        kind: "tasks_changed".into(),
        message: format!("{} tasks, {running} running", tasks.len()),
        data: Some(json!({ "tasks": tasks })),
    });
}
