//! Issue 8 (the engine side): read rules through Grep and Glob, protected
//! paths, secure defaults for embedders, bypassPermissions switched off,
//! the readable state directory, denials that do not cancel siblings,
//! unknown parameters, and settings files as they are found in the wild.
//!
//! Every test runs the real engine over the built-in tools, on real files,
//! with permissions loaded from settings JSON the way the CLI loads them.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]
#![allow(missing_docs)]

mod defaults;
mod protected;
mod search_rules;
mod settings_files;
mod siblings;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use baton::engine::permission::PermissionMode;
use baton::engine::settings::Settings;
use baton::engine::{async_trait, Approval, ApprovalRequest, Approver};
use baton::{CallResult, Engine, Outcome, ToolUse};
use serde_json::Value;
use std::sync::Mutex;

/// A workspace: `root` (canonical) inside a temporary directory, with a
/// state directory beside it.
#[derive(Debug)]
pub struct Ws {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub state: PathBuf,
    pub outside: PathBuf,
}

impl Default for Ws {
    fn default() -> Self {
        Ws::new()
    }
}

impl Ws {
    pub fn new() -> Ws {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("ws");
        let state = base.join("state");
        let outside = base.join("outside");
        for d in [&root, &state, &outside] {
            std::fs::create_dir_all(d).unwrap();
        }
        Ws {
            _dir: dir,
            root,
            state,
            outside,
        }
    }

    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    pub fn p(&self, rel: &str) -> String {
        self.root.join(rel).display().to_string()
    }
}

/// Who answers questions.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Asker {
    /// No approver: ask means deny.
    Nobody,
    /// An approver that says yes (and records what it was asked).
    Yes,
    /// An approver that says no (and records what it was asked).
    No,
}

#[derive(Debug, Default)]
pub struct Recorder {
    pub asked: Mutex<Vec<ApprovalRequest>>,
    pub refuse: bool,
}

#[async_trait]
impl Approver for Recorder {
    async fn approve(&self, request: ApprovalRequest) -> Approval {
        self.asked.lock().unwrap().push(request);
        if self.refuse {
            Approval::Deny {
                reason: Some("not today".into()),
            }
        } else {
            Approval::Allow
        }
    }
}

#[derive(Debug)]
pub struct Run {
    pub results: Vec<CallResult>,
    pub asked: Vec<ApprovalRequest>,
}

impl Run {
    pub fn get(&self, id: &str) -> &CallResult {
        self.results
            .iter()
            .find(|r| r.call_id == id)
            .unwrap_or_else(|| panic!("no result for {id}"))
    }

    pub fn text(&self, id: &str) -> String {
        text(self.get(id))
    }

    pub fn was_asked(&self, id: &str) -> bool {
        self.asked.iter().any(|a| a.call_id == id)
    }
}

pub fn text(r: &CallResult) -> String {
    r.content
        .iter()
        .filter_map(|b| match b {
            baton::engine::content::ContentBlock::Text { text } => Some(text.clone()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The engine the CLI would build for `settings` (JSON text written to
/// `--settings`), in `mode`.
pub fn engine(
    ws: &Ws,
    settings: &str,
    mode: PermissionMode,
    asker: Asker,
) -> (Engine, Arc<Recorder>) {
    let file = ws.state.join("settings.json");
    let layers = [(file, settings.to_string())];
    let settings = Settings::from_layers(&layers, &ws.root, None).unwrap();
    let recorder = Arc::new(Recorder {
        refuse: asker == Asker::No,
        ..Recorder::default()
    });
    let mut builder = Engine::builder(
        baton::BuiltinConfig::default()
            .pool(&*settings.policy)
            .unwrap(),
    )
    .cwd(&ws.root)
    .state_dir(&ws.state)
    .additional_roots(settings.roots(&ws.root).into_iter().skip(1).collect())
    .permission_mode(mode)
    .policy(settings.policy.clone())
    .hooks(settings.hooks.clone());
    if asker != Asker::Nobody {
        builder = builder.approver(recorder.clone());
    }
    (builder.build().unwrap(), recorder)
}

pub async fn run(
    ws: &Ws,
    settings: &str,
    mode: PermissionMode,
    asker: Asker,
    calls: Vec<(&str, &str, Value)>,
) -> Run {
    let (engine, recorder) = engine(ws, settings, mode, asker);
    run_on(&engine, &recorder, calls).await
}

pub async fn run_on(engine: &Engine, recorder: &Recorder, calls: Vec<(&str, &str, Value)>) -> Run {
    let batch = engine.open_batch().await.unwrap();
    for (id, name, input) in calls {
        batch.add(ToolUse::new(id, name, input)).unwrap();
    }
    let (results, _) = batch.finish().await;
    Run {
        results,
        asked: recorder.asked.lock().unwrap().clone(),
    }
}

pub fn denied(r: &CallResult) -> bool {
    r.outcome == Outcome::Denied
}

/// The modes where a question is possible or decides by itself.
pub const MODES: [PermissionMode; 4] = [
    PermissionMode::Default,
    PermissionMode::AcceptEdits,
    PermissionMode::Plan,
    PermissionMode::DontAsk,
];
