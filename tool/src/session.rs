//! The session: what outlives one batch.
//!
//! A host runs many messages in one session; state that tools keep between
//! calls (which files were read and when, background shells, the todo list)
//! lives here, in slots each tool owns. The session also carries the
//! notification channel through which tools tell the host about things that
//! happen outside any call (a background shell finished), and the registry
//! of what must stop when the session ends ([`crate::cleanup`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;

use crate::cleanup::{Cleanups, SessionCleanup};
use crate::extensions::SharedSlots;

/// Something the host should hear about outside the result stream.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Notification {
    /// Machine-readable kind, e.g. `background_task_finished`.
    pub kind: String,
    /// Human/model-readable text.
    pub message: String,
    /// Details for programs (a task's id and status…), by kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<serde_json::Value>,
}

/// Shared by every call of a session. Create with [`Session::new`].
pub struct Session {
    id: String,
    state_dir: PathBuf,
    transcript_path: Option<PathBuf>,
    slots: SharedSlots,
    cleanups: Cleanups,
    notifications: broadcast::Sender<Notification>,
}

crate::debug_fields! { Session { id, state_dir } }

impl Session {
    /// `state_dir` receives spilled results and shell output files.
    pub fn new(id: impl Into<String>, state_dir: impl Into<PathBuf>) -> Arc<Self> {
        let (notifications, _) = broadcast::channel(256);
        Arc::new(Session {
            id: id.into(),
            state_dir: state_dir.into(),
            transcript_path: None,
            slots: SharedSlots::default(),
            cleanups: Cleanups::default(),
            notifications,
        })
    }

    /// Like [`Session::new`], with the host's transcript at `transcript`
    /// (given to hooks as `transcript_path`).
    pub fn with_transcript(
        id: impl Into<String>,
        state_dir: impl Into<PathBuf>,
        transcript: impl Into<PathBuf>,
    ) -> Arc<Self> {
        let (notifications, _) = broadcast::channel(256);
        Arc::new(Session {
            id: id.into(),
            state_dir: state_dir.into(),
            transcript_path: Some(transcript.into()),
            slots: SharedSlots::default(),
            cleanups: Cleanups::default(),
            notifications,
        })
    }

    /// The session's id, as hooks see it.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Where spilled results, shell output and session state are kept.
    pub fn state_dir(&self) -> &Path {
        &self.state_dir
    }

    /// The host's transcript, if it keeps one.
    pub fn transcript_path(&self) -> Option<&Path> {
        self.transcript_path.as_deref()
    }

    /// Tool-owned state, one slot per type.
    pub fn slots(&self) -> &SharedSlots {
        &self.slots
    }

    /// The slot of type `T` (created on first use), registered in
    /// [`Session::cleanups`] under its type's name: for state holding what
    /// must not outlive the session (background shells, interactive
    /// sessions), so that ending the session stops it.
    pub fn lifetime_slot<T>(&self) -> Arc<T>
    where
        T: SessionCleanup + Default,
    {
        let slot = self.slots.get_or_default::<T>();
        self.cleanups
            .register(std::any::type_name::<T>(), slot.clone());
        slot
    }

    /// What must stop when the session ends (see [`crate::cleanup`]).
    pub fn cleanups(&self) -> &Cleanups {
        &self.cleanups
    }

    /// Tells the host something happened (dropped when nobody listens).
    pub fn notify(&self, notification: Notification) {
        let _ = self.notifications.send(notification);
    }

    /// Receives every notification sent from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Notification> {
        self.notifications.subscribe()
    }
}
