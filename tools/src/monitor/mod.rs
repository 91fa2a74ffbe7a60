//! `Monitor`: a command whose every stdout line becomes an event for the
//! model, with Claude Code's schema `{description, command, timeout_ms}`.
//!
//! The call answers at once with a task id; the command runs as a task of
//! the session (listed, stopped and ended like a background shell). Lines
//! reach the host as `monitor_event` notifications, gathered per 200 ms
//! and rate limited ([`batch`]); `baton agent` puts them before the
//! model's next turn. stderr and all of stdout go to the output file. The
//! command is judged exactly like a `Bash` command: the same permission
//! target, read-only judgement and sandbox.
//!
//! - [`batch`]: lines to bounded events, flood detection;
//! - [`run`]: starting the command and driving it to its end.

pub(crate) mod batch;
mod run;

use std::sync::Arc;
use std::time::Duration;

use baton_engine::shell;
use baton_engine::{
    async_trait, PermissionTarget, Tool, ToolContext, ToolDef, ToolError, ToolLogic, ToolOutput,
};
use parking_lot::Mutex;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::bash::background::{BackgroundTasks, TaskOwner};
use crate::bash::output::{Capture, CaptureSpec};

/// Time limit when the call gives none, and the most it may ask for.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(300_000);
/// The longest time limit a call may ask for.
pub const MAX_TIMEOUT: Duration = Duration::from_millis(1_800_000);

/// The input of `Monitor`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MonitorInput {
    /// What is being watched, in a few words (shown to the user).
    pub description: String,
    /// The command whose output lines to watch, in bash syntax (e.g. `tail -f log | grep --line-buffered ERROR`).
    pub command: String,
    /// How long to watch, in milliseconds (default 300000, at most 1800000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

struct Monitor;

/// The `Monitor` tool.
pub fn tool() -> Result<Tool, baton_engine::schema::InvalidSchema> {
    let def = ToolDef::new(
        "Monitor",
        "Runs a command in the background and turns each line it prints on stdout into an \
         event you receive between turns (lines close together arrive as one event). Use it \
         to wait for something: a log line, a build or test result, a server becoming ready. \
         Filter the output to the lines that matter (grep --line-buffered): a flood is folded \
         and then stopped. stderr goes to the output file. It ends when the command exits, at \
         `timeout_ms` (default 5 minutes, at most 30), or with TaskStop.",
    )
    .search_hint("monitor watch log tail events stream background lines")
    .should_defer(true);
    Tool::typed::<MonitorInput, _>(def, Monitor)
}

#[async_trait]
impl ToolLogic<MonitorInput> for Monitor {
    fn is_read_only(&self, input: &MonitorInput) -> bool {
        shell::is_read_only(&input.command)
    }

    fn is_concurrency_safe(&self, input: &MonitorInput) -> bool {
        shell::is_read_only(&input.command)
    }

    fn permission_target(&self, input: &MonitorInput, _ctx: &ToolContext) -> PermissionTarget {
        PermissionTarget::Command(input.command.clone())
    }

    fn label(&self, input: &MonitorInput) -> Option<String> {
        Some(crate::bash::label(&input.command).replacen("Bash", "Monitor", 1))
    }

    async fn validate_input(&self, input: &MonitorInput, _ctx: &ToolContext) -> Result<(), String> {
        if input.command.trim().is_empty() {
            return Err("`command` is empty; give the command to watch.".into());
        }
        if input.command.contains('\0') {
            return Err("`command` contains a NUL byte, which a shell cannot receive.".into());
        }
        if input.command.len() > 128 * 1024 - 1 {
            return Err("`command` is too long; write a script file and watch that.".into());
        }
        if input.timeout_ms == Some(0) {
            return Err("`timeout_ms` must be at least 1.".into());
        }
        Ok(())
    }

    async fn call(&self, input: MonitorInput, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let limit = input
            .timeout_ms
            .map_or(DEFAULT_TIMEOUT, Duration::from_millis)
            .min(MAX_TIMEOUT);
        let confined = match crate::bash::confine::sandbox_for_command(&input.command, false, &ctx)
        {
            Ok(c) => c,
            Err(refusal) => return Ok(ToolOutput::error(refusal)),
        };
        let tasks = crate::bash::background::registry(&ctx.session);
        let id = tasks.next_id_of("monitor");
        let log = ctx
            .session
            .state_dir()
            .join("shell")
            .join(format!("{id}.log"));
        let env = baton_engine::env::SettingsEnv::of(&ctx.session);
        let running = match run::start(&input.command, ctx.cwd(), &log, &env.0, confined.as_ref()) {
            Ok(r) => r,
            Err(err) => {
                return Ok(ToolOutput::error(format!(
                    "The monitor could not be started: {err}."
                )))
            }
        };
        // The task's record names the file; the monitor writes it itself.
        let capture = Arc::new(Mutex::new(Capture::new(CaptureSpec {
            inline_chars: 2,
            log_path: log.clone(),
            log_max_bytes: 0,
            eager_log: false,
        })));
        let task = BackgroundTasks::register(
            &ctx.session,
            id.clone(),
            "monitor",
            &input.command,
            capture,
            TaskOwner::of(&ctx.context),
        );
        tokio::spawn(run::drive(
            running,
            task,
            Arc::downgrade(&ctx.session),
            limit,
        ));
        let mut text = format!(
            "Monitor started as task {id} ({}). Each line the command prints on stdout reaches \
             you as an event; stderr and all output go to {}. It stops after {} s; stop it \
             earlier with TaskStop (task_id \"{id}\").",
            input.description,
            log.display(),
            limit.as_secs()
        );
        if let Some(note) = confined.and_then(|c| c.note) {
            text.push_str(&format!("\n{note}"));
        }
        Ok(ToolOutput::text(text))
    }
}

#[cfg(test)]
mod tests;
