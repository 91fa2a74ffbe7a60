//! The task lines: `tasks` lists the session's tasks, `task_stop` stops
//! one, `task_output` reads the end of one's output. Each answers with one
//! line (or an `error` line naming the known ids).

use serde_json::{json, Value};

use baton::Engine;

/// A task line, as the dispatcher parsed it (`strict::Checked`).
#[derive(Debug)]
pub(super) enum TaskLine {
    /// `{"type":"tasks"}`
    List,
    /// `{"type":"task_stop","task_id":"shell-1"}`
    Stop { task_id: String },
    /// `{"type":"task_output","task_id":"shell-1"}`
    Output { task_id: String },
}

/// The answer to a task line, or the text of an error line.
pub(super) async fn answer(engine: &Engine, line: TaskLine) -> Result<Value, String> {
    Ok(match line {
        TaskLine::List => json!({"type": "tasks", "tasks": engine.tasks()}),
        TaskLine::Stop { task_id } => {
            let task = engine
                .stop_task(&task_id)
                .await
                .map_err(|e| e.to_string())?;
            json!({"type": "task_stopped", "task": task})
        }
        TaskLine::Output { task_id } => {
            let tail = engine.task_output(&task_id).map_err(|e| e.to_string())?;
            json!({
                "type": "task_output",
                "task_id": tail.id,
                "tail": tail.tail,
                "total_bytes": tail.total_bytes,
                "truncated": tail.truncated,
            })
        }
    })
}
