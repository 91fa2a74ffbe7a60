//! `baton serve --resume ID`: a new process takes over a session whose
//! process ended (a host restart, a crash, SIGKILL).
//!
//! Every serve session keeps its state in its state directory
//! (`baton::session_state`); the session's id is that directory's name.
//! This module picks the directory (the saved session's, for a resume),
//! hands the saved state to the engine builder, writes the `resumed` line,
//! and saves the state again whenever something that changes it happened:
//! a host line was handled, a result or `done` was written, a task started
//! or ended.

use std::path::{Path, PathBuf};

use baton::session_state::SessionState;
use baton::Engine;
use serde_json::json;

use super::output;
use crate::cli::{state_dir, CliError, Common, Setup};

/// The state directory chosen, and the state to resume if any.
pub(crate) struct Prepared {
    dir: PathBuf,
    state: Option<SessionState>,
}

/// Chooses the state directory before the setup loads: for `--resume ID`
/// the saved session's (whose workspace becomes `--cwd` unless given).
pub(crate) fn prepare(common: &mut Common, resume: Option<&str>) -> Result<Prepared, CliError> {
    let Some(id) = resume else {
        let dir = state_dir::choose(common.state_dir.as_deref())?;
        common.state_dir = Some(dir.clone());
        return Ok(Prepared { dir, state: None });
    };
    check_id(id)?;
    let dir = match &common.state_dir {
        Some(dir) => std::path::absolute(dir)
            .map_err(|e| CliError::Usage(format!("--state-dir {}: {e}", dir.display())))?,
        None => state_dir::sessions_root().join(id),
    };
    let usage =
        |e: baton::session_state::StateError| CliError::Usage(format!("--resume {id}: {e}"));
    let state = SessionState::load(&dir).map_err(usage)?;
    state.check_not_running().map_err(usage)?;
    if state.session_id != id {
        return Err(CliError::Usage(format!(
            "--resume {id}: {} holds session {}, not {id}",
            dir.display(),
            state.session_id
        )));
    }
    if common.cwd.is_none() {
        common.cwd = Some(state.root.clone());
    }
    common.state_dir = Some(dir.clone());
    Ok(Prepared {
        dir,
        state: Some(state),
    })
}

/// An id names a directory under the sessions root: nothing that could
/// climb out of it (`..`, `/`) or hide (a leading dot).
fn check_id(id: &str) -> Result<(), CliError> {
    let fine = !id.is_empty()
        && id.len() <= 128
        && !id.starts_with('.')
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if fine {
        Ok(())
    } else {
        Err(CliError::Usage(format!(
            "--resume {id:?}: a session id is the name of its state directory \
             (letters, digits, `-`, `_`, `.`)"
        )))
    }
}

/// Names the session after its directory and gives the builder the saved
/// state.
pub(crate) fn apply(setup: &mut Setup, prepared: Prepared) -> Result<(), CliError> {
    let builder = setup
        .builder
        .take()
        .ok_or_else(|| CliError::Failed("the engine was already built".into()))?;
    let builder = match prepared.state {
        Some(state) => builder
            .resume_state(prepared.dir, state)
            .map_err(|e| CliError::Usage(e.to_string()))?,
        None => builder.session_id(dir_name(&prepared.dir)),
    };
    setup.builder = Some(builder);
    Ok(())
}

fn dir_name(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| format!("baton-{}", std::process::id()))
}

/// The `resumed` line, when the engine resumed a session.
pub(crate) fn announce(engine: &Engine) -> Result<(), CliError> {
    let Some(report) = engine.resumed() else {
        return Ok(());
    };
    output::write_line(&json!({
        "type": "resumed",
        "session_id": report.session_id,
        "cwd": report.cwd,
        "lost_tasks": report.lost_tasks,
        "tasks": report.tasks,
        "warnings": report.warnings,
    }))
}

/// Saves the session's state if it changed. A failure is a diagnostic on
/// stderr, once: the session itself goes on (only a later resume suffers).
pub(crate) fn save(engine: &Engine, warned: &mut bool) {
    if let Err(e) = engine.save_state() {
        if !*warned {
            *warned = true;
            eprintln!("baton: {e}; this session cannot be resumed from here on");
        }
    }
}

/// Whether `event` may have changed the saved state: results (a file read,
/// a rule remembered, a tool loaded, a `cd`), the end of a message, and
/// notifications (tasks starting and ending). Progress and lifecycle lines
/// change nothing, and are too frequent to save after.
pub(crate) fn changes_state(event: &baton::Event) -> bool {
    matches!(
        event,
        baton::Event::Result { .. } | baton::Event::Done(_) | baton::Event::Notification(_)
    )
}
