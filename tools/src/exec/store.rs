//! The live sessions of one engine (a session slot), with a cap.
//!
//! Each session holds a process tree, a terminal and up to a megabyte of
//! output, and a model that forgets to close what it opened would pile them
//! up for the whole conversation. So there is a cap (64, as in codex):
//! opening one more first closes a session that has ended, else the one
//! idle the longest (never one a call is using now), and from 60 on every
//! new session's result warns the model. The store is one of the session's
//! cleanups, so ending the session stops every session's tree; so does
//! dropping the store (the engine going away without ending it).

use std::collections::BTreeMap;
use std::sync::Arc;

use baton_engine::cleanup::{SessionCleanup, Stopping};
use baton_engine::Session;
use parking_lot::Mutex;

use super::session::ExecSession;

/// Most live sessions per engine.
pub const MAX_SESSIONS: usize = 64;
/// From this many sessions on, a new one comes with a warning.
pub const WARN_SESSIONS: usize = 60;

/// The session's `exec_command` sessions (a session slot): each a process
/// that goes on between calls, until it exits or is stopped.
#[derive(Default)]
pub struct ExecSessions {
    inner: Mutex<Inner>,
}

// By hand: the sessions hold live processes; their ids are what a reader
// needs. `try_lock`: printing must not wait for (or deadlock with) a holder.
impl std::fmt::Debug for ExecSessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut out = f.debug_struct("ExecSessions");
        match self.inner.try_lock() {
            Some(inner) => out.field("sessions", &inner.sessions.keys().collect::<Vec<_>>()),
            None => out.field("sessions", &"<locked>"),
        };
        out.finish_non_exhaustive()
    }
}

#[derive(Default)]
struct Inner {
    next_id: i32,
    sessions: BTreeMap<i32, Arc<ExecSession>>,
}

impl ExecSessions {
    /// The session's store, created on first use and registered in the
    /// session's cleanups: ending the session stops every session here.
    pub(crate) fn of(session: &Session) -> Arc<ExecSessions> {
        session.lifetime_slot::<ExecSessions>()
    }

    /// A fresh id (never reused within the engine).
    pub(crate) fn next_id(&self) -> i32 {
        let mut inner = self.inner.lock();
        inner.next_id += 1;
        // Large enough not to be mistaken for a count or an index.
        1000 + inner.next_id
    }

    pub(crate) fn get(&self, id: i32) -> Option<Arc<ExecSession>> {
        self.inner.lock().sessions.get(&id).cloned()
    }

    pub(crate) fn remove(&self, id: i32) -> Option<Arc<ExecSession>> {
        self.inner.lock().sessions.remove(&id)
    }

    /// How many sessions are open.
    pub fn len(&self) -> usize {
        self.inner.lock().sessions.len()
    }

    /// Whether no session is open.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every live session, oldest first.
    pub(crate) fn all(&self) -> Vec<Arc<ExecSession>> {
        self.inner.lock().sessions.values().cloned().collect()
    }

    /// Whether there is room for one more session (making it by pruning
    /// if needed); `Err` when every session is in use by a call.
    pub(crate) fn make_room(&self) -> Result<Option<(i32, String)>, String> {
        let mut inner = self.inner.lock();
        if inner.sessions.len() < MAX_SESSIONS {
            return Ok(None);
        }
        let victim = inner
            .sessions
            .values()
            .filter(|s| s.exit_code().is_some())
            .min_by_key(|s| s.last_used())
            .or_else(|| {
                inner
                    .sessions
                    .values()
                    .filter(|s| !s.is_busy())
                    .min_by_key(|s| s.last_used())
            })
            .map(|s| s.id);
        let Some(id) = victim else {
            return Err(format!(
                "All {MAX_SESSIONS} interactive sessions are in use; wait for one to finish."
            ));
        };
        let Some(session) = inner.sessions.remove(&id) else {
            return Ok(None);
        };
        session.request_stop();
        Ok(Some((id, session.command.clone())))
    }

    /// Adds a started session.
    pub(crate) fn insert(&self, session: Arc<ExecSession>) -> usize {
        let mut inner = self.inner.lock();
        inner.sessions.insert(session.id, session);
        inner.sessions.len()
    }

    /// Stops every session and waits (bounded) until their trees are gone.
    pub async fn stop_all(&self) {
        self.begin_stop().await
    }

    /// Asks every session to stop, before returning; the future waits
    /// (bounded) until their trees are gone.
    fn begin_stop(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let all: Vec<_> = std::mem::take(&mut self.inner.lock().sessions)
            .into_values()
            .collect();
        for s in &all {
            s.request_stop();
        }
        async move {
            let ends = futures::future::join_all(all.iter().map(|s| s.ended()));
            let _ = tokio::time::timeout(std::time::Duration::from_secs(5), ends).await;
        }
    }
}

impl SessionCleanup for ExecSessions {
    fn stop(&self) -> Option<Stopping> {
        Some(Box::pin(self.begin_stop()))
    }
}

impl Drop for ExecSessions {
    fn drop(&mut self) {
        for session in self.inner.get_mut().sessions.values() {
            session.request_stop();
        }
    }
}

/// Stops every interactive session of `session` (the engine ending).
pub async fn stop_all(session: &Session) {
    if let Some(store) = session.slots().get::<ExecSessions>() {
        store.stop_all().await;
    }
}

/// The synchronous form of [`stop_all`], for shutdown paths that cannot
/// await: asks every session to stop (each tree gets its SIGTERM grace
/// while the runtime runs, and is killed if the runtime goes away).
pub fn stop_all_now(session: &Session) {
    if let Some(store) = session.slots().get::<ExecSessions>() {
        drop(store.begin_stop());
    }
}
