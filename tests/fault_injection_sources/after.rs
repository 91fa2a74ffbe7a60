//! After a faulted batch of tests/fault_injection_sources.rs: the batches
//! that show the session goes on.

use baton::{CallResult, Engine, Event, ToolUse};
use serde_json::json;

use super::verdict::Case;
use super::BOUND;

/// One batch's results, in the order they came; `Err` if it stalled.
async fn results_of(
    engine: &Engine,
    calls: Vec<ToolUse>,
) -> Result<Vec<(usize, CallResult)>, String> {
    let run = async {
        let mut batch = engine.open_batch().await.map_err(|e| e.to_string())?;
        for c in calls {
            batch.add(c).map_err(|e| e.to_string())?;
        }
        batch.end();
        let mut out = Vec::new();
        while let Some(e) = batch.next_event().await {
            match e {
                Event::Result { index, result } => out.push((index, *result)),
                Event::Done(_) => break,
                _ => {}
            }
        }
        Ok(out)
    };
    tokio::time::timeout(BOUND, run)
        .await
        .map_err(|_| format!("a batch after the faults took over {BOUND:?}"))?
}

/// The batches after the faulted one: local Bash, remote Bash and an MCP
/// call; then, if the session's worker was lost, one more remote call.
pub async fn next_batches(
    engine: &Engine,
    case: &Case,
    needle: &str,
) -> Result<(Vec<(usize, CallResult)>, Option<CallResult>), String> {
    let remote = |id: &str| {
        ToolUse::new(
            id,
            "WorkerBash",
            json!({"command": format!("echo after-w # {needle}")}),
        )
    };
    let first = results_of(
        engine,
        vec![
            ToolUse::new(
                "a0",
                "Bash",
                json!({"command": format!("echo after-b # {needle}")}),
            ),
            remote("a1"),
            ToolUse::new("a2", "mcp__faults__echo", json!({"text": "after-m"})),
        ],
    )
    .await?;
    let second = if case.worker_lost() {
        results_of(engine, vec![remote("a3")])
            .await?
            .pop()
            .map(|(_, r)| r)
    } else {
        None
    };
    Ok((first, second))
}
