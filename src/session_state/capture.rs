//! Reading a session's state out of a running engine, and putting a saved
//! one back into the session and context of a new engine.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, UNIX_EPOCH};

use baton_engine::deferred::DiscoveredTools;
use baton_engine::hooks::permission_updates::SessionPermissions;
use baton_engine::permission::{Rule, RuleKind};
use baton_engine::{Context, Session};
use baton_tools::bash::BackgroundTasks;
use baton_tools::files::read_state::{FileSnapshot, ReadState};
use serde::Serialize;

use super::{write_atomic, FileRead, SavedRule, SessionState, StateError, TaskRecord, VERSION};
use crate::Engine;

/// What a resumed session got back and what it lost. Hosts show
/// `lost_tasks` to the model: their processes are gone.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ResumeReport {
    /// The id of the resumed session.
    pub session_id: String,
    /// The working directory it resumes in.
    pub cwd: PathBuf,
    /// Tasks that were running when the previous process ended.
    pub lost_tasks: Vec<TaskRecord>,
    /// Every task of the previous processes (the lost ones with status
    /// `lost`); their output files are still there.
    pub tasks: Vec<TaskRecord>,
    /// What could not be restored (a working directory that is gone, a
    /// rule that no longer parses).
    pub warnings: Vec<String>,
}

/// The text last written, so an unchanged state is not written again.
#[derive(Default)]
struct LastSaved(Mutex<Option<String>>);

/// Tasks of earlier processes of this session, kept in the state.
struct PreviousTasks(Vec<TaskRecord>);

impl Engine {
    /// A builder for the session saved in `state_dir` (shorthand for
    /// [`crate::EngineBuilder::resume_from`]).
    pub fn resume(
        pool: baton_engine::ToolPool,
        state_dir: impl Into<PathBuf>,
    ) -> Result<crate::EngineBuilder, StateError> {
        Engine::builder(pool).resume_from(state_dir)
    }

    /// The session's state as it is now.
    pub fn session_state(&self) -> SessionState {
        let session = self.runtime.session();
        let context = self.runtime.context();
        let root = context
            .roots
            .first()
            .cloned()
            .unwrap_or(context.cwd.clone());
        let mut files_read: Vec<FileRead> = ReadState::of(session)
            .entries()
            .into_iter()
            .map(|(path, snap)| file_read(path, &snap))
            .collect();
        files_read.sort_by(|a, b| a.path.cmp(&b.path));
        let rules = SessionPermissions::of(session)
            .rules()
            .iter()
            .map(|r| SavedRule {
                behavior: r.kind().as_str().to_string(),
                rule: r.text().to_string(),
            })
            .collect();
        let mut tasks = session
            .slots()
            .get::<PreviousTasks>()
            .map(|p| p.0.clone())
            .unwrap_or_default();
        tasks.extend(
            baton_tools::tasks::list(session)
                .into_iter()
                .map(|t| TaskRecord {
                    id: t.id,
                    kind: t.kind,
                    status: t.status,
                    description: t.description,
                    output_file: t.output_file,
                    exit_code: t.exit_code,
                }),
        );
        SessionState {
            version: VERSION,
            session_id: session.id().to_string(),
            pid: std::process::id(),
            root,
            cwd: context.cwd.clone(),
            files_read,
            rules,
            loaded_tools: session.slots().get_or_default::<DiscoveredTools>().names(),
            tasks,
        }
    }

    /// Writes the session's state to its state directory if it changed
    /// since the last write; true when it wrote. Call it after each message
    /// (and after answering approvals) so that a new process can resume.
    pub fn save_state(&self) -> Result<bool, StateError> {
        let text = self.session_state().to_text();
        let session = self.runtime.session();
        let last = session.slots().get_or_default::<LastSaved>();
        let mut last = last.0.lock().unwrap_or_else(|e| e.into_inner());
        if last.as_deref() == Some(text.as_str()) {
            return Ok(false);
        }
        write_atomic(session.state_dir(), &text)?;
        *last = Some(text);
        Ok(true)
    }

    /// What resuming restored and lost, when this engine resumed a session.
    pub fn resumed(&self) -> Option<Arc<ResumeReport>> {
        self.runtime.session().slots().get::<ResumeReport>()
    }
}

fn file_read(path: PathBuf, snap: &FileSnapshot) -> FileRead {
    FileRead {
        path,
        sha256: snap
            .hash
            .map(|h| h.iter().map(|b| format!("{b:02x}")).collect()),
        size: snap.size,
        mtime: snap
            .mtime
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map(|d| (d.as_secs(), d.subsec_nanos())),
        dev: snap.inode.0,
        ino: snap.inode.1,
    }
}

fn snapshot(file: &FileRead) -> Result<FileSnapshot, String> {
    let hash = match &file.sha256 {
        None => None,
        Some(hex) => Some(parse_hash(hex).ok_or_else(|| {
            format!(
                "{}: `sha256` is not 64 hex digits; the file must be read again",
                file.path.display()
            )
        })?),
    };
    Ok(FileSnapshot {
        hash,
        size: file.size,
        mtime: file
            .mtime
            .and_then(|(s, n)| UNIX_EPOCH.checked_add(Duration::new(s, n.min(999_999_999)))),
        inode: (file.dev, file.ino),
    })
}

fn parse_hash(hex: &str) -> Option<[u8; 32]> {
    if hex.len() != 64 || !hex.is_ascii() {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

fn rule_kind(behavior: &str) -> Option<RuleKind> {
    match behavior {
        "allow" => Some(RuleKind::Allow),
        "ask" => Some(RuleKind::Ask),
        "deny" => Some(RuleKind::Deny),
        _ => None,
    }
}

/// The number `n` of a task id `shell-n` / `monitor-n`.
fn task_number(id: &str) -> Option<u64> {
    id.rsplit_once('-')?.1.parse().ok()
}

/// Puts `state` into a new engine's `session` and starting `context`
/// (whose first root is the saved root: the builder checked). The report
/// is kept in the session for [`Engine::resumed`].
pub(crate) fn restore(session: &Session, context: &mut Context, state: SessionState) {
    let mut report = ResumeReport {
        session_id: state.session_id.clone(),
        ..ResumeReport::default()
    };
    if state.cwd.is_dir() {
        context.cwd = state.cwd.clone();
    } else {
        report.warnings.push(format!(
            "the working directory {} is gone; starting in {}",
            state.cwd.display(),
            context.cwd.display()
        ));
    }
    report.cwd = context.cwd.clone();
    let reads = ReadState::of(session);
    for file in &state.files_read {
        match snapshot(file) {
            Ok(snap) => reads.record(file.path.clone(), snap),
            Err(problem) => report.warnings.push(problem),
        }
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let project: &Path = &state.root;
    let mut rules = Vec::new();
    for saved in &state.rules {
        // A rule that no longer parses is dropped, never widened: the
        // session then asks again.
        let Some(kind) = rule_kind(&saved.behavior) else {
            report.warnings.push(format!(
                "rule `{}`: unknown behavior `{}`; not restored",
                saved.rule, saved.behavior
            ));
            continue;
        };
        match Rule::parse(&saved.rule, kind, home.as_deref(), project) {
            Ok(rule) => rules.push(rule),
            Err(e) => report
                .warnings
                .push(format!("rule `{}` not restored: {}", saved.rule, e.message)),
        }
    }
    SessionPermissions::of(session).add_rules(rules);
    let discovered = session.slots().get_or_default::<DiscoveredTools>();
    for name in &state.loaded_tools {
        discovered.insert(name.clone());
    }
    let mut highest = 0;
    for mut task in state.tasks {
        highest = highest.max(task_number(&task.id).unwrap_or(0));
        // "exited" is an interactive session whose end the model has not
        // read: its process is gone either way.
        if task.status == "running" || task.status == "exited" {
            task.status = "lost".into();
            report.lost_tasks.push(task.clone());
        }
        report.tasks.push(task);
    }
    session
        .slots()
        .get_or_default::<BackgroundTasks>()
        .number_after(highest);
    session
        .slots()
        .insert(Arc::new(PreviousTasks(report.tasks.clone())));
    session.slots().insert(Arc::new(report));
}

/// Whether `state` may be resumed in a workspace rooted at `root`.
pub(crate) fn check_root(state: &SessionState, root: &Path) -> Result<(), StateError> {
    if state.root != root {
        return Err(StateError::Mismatch(format!(
            "session {} was started in {}, not {}; resume it there (leave out --cwd)",
            state.session_id,
            state.root.display(),
            root.display()
        )));
    }
    Ok(())
}
