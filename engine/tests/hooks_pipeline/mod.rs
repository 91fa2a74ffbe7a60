//! Real hook scripts (bash and python3) run through the real pipeline, with
//! rules and hooks loaded from a real settings file. The tools are small
//! stand-ins defined here: a `Bash` that echoes its command instead of
//! running it, an `Edit` that only reports its path, and a `Fail` that
//! always fails.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]
#![allow(missing_docs)]

mod command_hooks;
mod examples;
mod hook_vars;
mod in_process;
mod protocol;
mod random_hooks;
mod working_dir;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use baton_engine::permission::{Approval, ApprovalRequest, Approver, FileAccess};
use baton_engine::settings::Settings;
use baton_engine::{
    CallResult, Outcome, PermissionTarget, Pipeline, Session, Tool, ToolContext, ToolDef,
    ToolError, ToolLogic, ToolOutput, ToolPool, ToolUse,
};
use parking_lot::Mutex;
use serde_json::{json, Value};

struct EchoBash;

#[baton_engine::async_trait]
impl ToolLogic<Value> for EchoBash {
    fn permission_target(&self, input: &Value, _ctx: &ToolContext) -> PermissionTarget {
        PermissionTarget::Command(input["command"].as_str().unwrap_or_default().to_string())
    }

    async fn call(&self, input: Value, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(format!(
            "ran: {}",
            input["command"].as_str().unwrap_or_default()
        )))
    }
}

struct FakeEdit;

#[baton_engine::async_trait]
impl ToolLogic<Value> for FakeEdit {
    fn permission_target(&self, input: &Value, ctx: &ToolContext) -> PermissionTarget {
        PermissionTarget::Path {
            path: ctx
                .context
                .absolute(input["file_path"].as_str().unwrap_or_default()),
            access: FileAccess::Write,
        }
    }

    async fn call(&self, input: Value, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(format!(
            "edited {}",
            input["file_path"].as_str().unwrap_or_default()
        )))
    }
}

struct Fail;

#[baton_engine::async_trait]
impl ToolLogic<Value> for Fail {
    fn is_read_only(&self, _input: &Value) -> bool {
        true
    }

    async fn call(&self, _input: Value, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        Err(ToolError::new("the fake tool failed on purpose"))
    }
}

fn tools() -> Vec<Tool> {
    let object = |prop: &str| {
        json!({"type": "object", "properties": {prop: {"type": "string"}},
               "required": [prop], "additionalProperties": false})
    };
    vec![
        Tool::raw(
            ToolDef::new("Bash", "echoes a command"),
            object("command"),
            EchoBash,
        )
        .unwrap(),
        Tool::raw(
            ToolDef::new("Edit", "pretends to edit"),
            object("file_path"),
            FakeEdit,
        )
        .unwrap(),
        Tool::raw(
            ToolDef::new("Fail", "always fails"),
            json!({"type": "object"}),
            Fail,
        )
        .unwrap(),
    ]
}

/// Records every question and answers with a fixed answer.
#[derive(Debug)]
pub struct RecordingApprover {
    pub asked: Mutex<Vec<ApprovalRequest>>,
    pub answer: Approval,
}

#[baton_engine::async_trait]
impl Approver for RecordingApprover {
    async fn approve(&self, request: ApprovalRequest) -> Approval {
        self.asked.lock().push(request);
        self.answer.clone()
    }
}

/// A project with settings, hook scripts and a session working directory
/// below the project root (so cwd and CLAUDE_PROJECT_DIR differ).
#[derive(Debug)]
pub struct Env {
    _dir: tempfile::TempDir,
    pub project: PathBuf,
    pub home: PathBuf,
    pub cwd: PathBuf,
    pub state: PathBuf,
}

impl Default for Env {
    fn default() -> Self {
        Env::new()
    }
}

impl Env {
    pub fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let project = root.join("project");
        let home = root.join("home");
        let cwd = project.join("sub");
        let state = root.join("state");
        for d in [
            &project.join(".claude"),
            &home,
            &cwd,
            &state,
            &project.join("hooks"),
        ] {
            std::fs::create_dir_all(d).unwrap();
        }
        Env {
            _dir: dir,
            project,
            home,
            cwd,
            state,
        }
    }

    /// Writes an executable hook script under `<project>/hooks/`.
    pub fn script(&self, name: &str, body: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = self.project.join("hooks").join(name);
        std::fs::write(&path, body).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    pub fn settings(&self, value: Value) -> Settings {
        std::fs::write(
            self.project.join(".claude/settings.json"),
            serde_json::to_string_pretty(&value).unwrap(),
        )
        .unwrap();
        Settings::load_with_home(&self.project, Some(&self.home), None).unwrap()
    }

    pub fn pipeline(&self, settings: &Settings) -> Pipeline {
        Pipeline::allow_all_unsafe(ToolPool::of(tools())).with_settings(settings)
    }

    pub async fn call(
        &self,
        settings: &Settings,
        pipeline: &Pipeline,
        name: &str,
        input: Value,
    ) -> CallResult {
        let session =
            Session::with_transcript("session-1", &self.state, self.state.join("t.jsonl"));
        let ctx = ToolContext::standalone("call-1", settings.context(&self.cwd), session);
        pipeline
            .run(pipeline.prepare(ToolUse::new("call-1", name, input)), ctx)
            .await
    }
}

/// `{"PreToolUse": [{"matcher": m, "hooks": [{"type": "command", "command": c}]}]}`.
pub fn hook(event: &str, matcher: &str, command: &str) -> Value {
    json!({event: [{"matcher": matcher, "hooks": [{"type": "command", "command": command}]}]})
}

pub fn ran(result: &CallResult) -> bool {
    result.outcome == Outcome::Success
}

pub fn quote(path: &Path) -> String {
    format!("'{}'", path.display())
}

pub fn approver(answer: Approval) -> Arc<RecordingApprover> {
    Arc::new(RecordingApprover {
        asked: Mutex::new(Vec::new()),
        answer,
    })
}
