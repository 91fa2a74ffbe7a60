//! The task lines: `tasks` lists the session's tasks, `task_stop` stops
//! one, `task_output` reads the end of one's output. Each answers with one
//! line (or an `error` line naming the known ids).

use serde::Deserialize;
use serde_json::{json, Value};

use baton::Engine;

#[derive(Debug, Deserialize)]
#[serde(tag = "type", deny_unknown_fields)]
enum TaskLine {
    /// `{"type":"tasks"}`
    #[serde(rename = "tasks")]
    List,
    /// `{"type":"task_stop","task_id":"shell-1"}`
    #[serde(rename = "task_stop")]
    Stop { task_id: String },
    /// `{"type":"task_output","task_id":"shell-1"}`
    #[serde(rename = "task_output")]
    Output { task_id: String },
}

/// The answer to a task line, or the text of an error line.
pub async fn answer(engine: &Engine, msg: &Value) -> Result<Value, String> {
    let line = TaskLine::deserialize(msg).map_err(|e| format!("bad task line: {e}"))?;
    Ok(match line {
        TaskLine::List => json!({"type": "tasks", "tasks": engine.tasks()}),
        TaskLine::Stop { task_id } => {
            let task = engine.stop_task(&task_id).await?;
            json!({"type": "task_stopped", "task": task})
        }
        TaskLine::Output { task_id } => {
            let tail = engine.task_output(&task_id)?;
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
