//! `TaskOutput` and `TaskStop`: the model's handle on background shells.

use std::time::Duration;

use baton_engine::{
    async_trait, CancelReason, InterruptBehavior, Tool, ToolContext, ToolDef, ToolError, ToolLogic,
    ToolOutput,
};
use schemars::JsonSchema;
use serde::Deserialize;

use super::background::{self, Finish, Task};
use super::report;
use super::BashConfig;

/// The input of `TaskOutput`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskOutputInput {
    /// The id returned by Bash with run_in_background.
    pub task_id: String,
    /// Wait for the task to finish before answering (default true).
    #[serde(default = "default_true")]
    pub block: bool,
    /// Longest wait in milliseconds when blocking (default 30000, at most 600000).
    #[serde(default)]
    pub timeout: Option<u64>,
}

fn default_true() -> bool {
    true
}

/// The input of `TaskStop`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskStopInput {
    /// The id returned by Bash with run_in_background.
    pub task_id: String,
}

struct TaskOutputTool {
    default_wait: Duration,
    max_wait: Duration,
}

struct TaskStopTool;

pub(crate) fn task_output(
    config: &BashConfig,
) -> Result<Tool, baton_engine::schema::InvalidSchema> {
    let def = ToolDef::new(
        "TaskOutput",
        "Reads the output of a background shell task started by Bash with \
         run_in_background: its status (running, or how it ended) and its output so \
         far (beginning and end when long; the complete output file is named). With \
         `block` (the default) it first waits for the task to finish, up to `timeout` ms.",
    )
    .search_hint("read background shell task output status")
    .should_defer(true)
    // Only the wait is interrupted; the task itself keeps running.
    .interrupt(InterruptBehavior::Cancel);
    Tool::typed::<TaskOutputInput, _>(
        def,
        TaskOutputTool {
            default_wait: config.task_output_default_wait,
            max_wait: config.max_timeout,
        },
    )
}

pub(crate) fn task_stop(_config: &BashConfig) -> Result<Tool, baton_engine::schema::InvalidSchema> {
    let def = ToolDef::new(
        "TaskStop",
        "Stops a background shell task started by Bash with run_in_background, \
         together with every process it started, and returns its last output.",
    )
    .search_hint("stop kill background shell task")
    .should_defer(true);
    Tool::typed::<TaskStopInput, _>(def, TaskStopTool)
}

fn find(ctx: &ToolContext, id: &str) -> Result<std::sync::Arc<Task>, ToolOutput> {
    let tasks = background::registry(&ctx.session);
    tasks.get(id).ok_or_else(|| {
        let known = tasks.ids();
        let listing = if known.is_empty() {
            "There are no background tasks in this session.".to_string()
        } else {
            format!("Known tasks: {}.", known.join(", "))
        };
        ToolOutput::error(format!("No background task has the id \"{id}\". {listing}"))
    })
}

/// Status line, output, and where the whole output is.
fn describe(task: &Task, finish: Option<&Finish>, note: Option<&str>) -> ToolOutput {
    let capture = task.capture.lock();
    let rendered = capture.render();
    let elapsed = task.started.elapsed().as_secs_f64();
    let status = match finish {
        None => format!(
            "Task {} ({}) is still running ({elapsed:.1} s so far).",
            task.id,
            super::label(&task.command)
        ),
        Some(f) => {
            let code = f
                .exit_code
                .map_or_else(String::new, |c| format!(", exit code {c}"));
            format!(
                "Task {} ({}) {}{code}.",
                task.id,
                super::label(&task.command),
                f.status.replace('_', " ")
            )
        }
    };
    let mut lines = vec![status];
    lines.extend(note.map(str::to_string));
    lines.extend(finish.and_then(|f| f.line.clone()));
    lines.extend(report::log_line(&capture, rendered.omitted_bytes > 0, true));
    let text = report::compose(&rendered.text, &lines);
    if finish.is_some_and(|f| f.is_error && f.status != "stopped") {
        ToolOutput::error(text)
    } else {
        ToolOutput::text(text)
    }
}

#[async_trait]
impl ToolLogic<TaskOutputInput> for TaskOutputTool {
    fn is_concurrency_safe(&self, _input: &TaskOutputInput) -> bool {
        true
    }

    fn is_read_only(&self, _input: &TaskOutputInput) -> bool {
        true
    }

    async fn call(
        &self,
        input: TaskOutputInput,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let task = match find(&ctx, &input.task_id) {
            Ok(task) => task,
            Err(output) => return Ok(output),
        };
        let mut note = None;
        if input.block && task.finish().is_none() {
            let wait = input
                .timeout
                .map_or(self.default_wait, Duration::from_millis)
                .min(self.max_wait);
            tokio::select! {
                _ = task.finished() => {}
                _ = tokio::time::sleep(wait) => {
                    note = Some(format!(
                        "Waited {:.1} s; the task has not finished yet.",
                        wait.as_secs_f64()
                    ));
                }
                _ = ctx.cancel.cancelled() => {}
            }
        }
        let finish = task.finish();
        Ok(describe(&task, finish.as_ref(), note.as_deref()))
    }
}

#[async_trait]
impl ToolLogic<TaskStopInput> for TaskStopTool {
    fn is_concurrency_safe(&self, _input: &TaskStopInput) -> bool {
        true
    }

    async fn call(&self, input: TaskStopInput, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let task = match find(&ctx, &input.task_id) {
            Ok(task) => task,
            Err(output) => return Ok(output),
        };
        let output = if let Some(finish) = task.finish() {
            describe(
                &task,
                Some(&finish),
                Some("It had already ended; nothing was stopped."),
            )
        } else {
            task.request_stop(CancelReason::Other("stopped with TaskStop".into()));
            let finish = task.finished().await;
            describe(&task, Some(&finish), None)
        };
        let response = stop_response(&task, &output);
        Ok(output.with_response(response))
    }
}

/// Claude Code's `tool_response` for TaskStop (sdk-tools.d.ts
/// `TaskStopOutput`): what the model was told, which task, and its kind
/// in Claude Code's terms.
fn stop_response(task: &Task, output: &ToolOutput) -> serde_json::Value {
    serde_json::json!({
        "message": baton_engine::content::joined_text(&output.content),
        "task_id": task.id,
        "task_type": match task.kind {
            "agent" => "local_agent",
            _ => "local_bash",
        },
    })
}
