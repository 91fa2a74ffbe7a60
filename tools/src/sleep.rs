//! `Sleep`: wait without holding a shell.
//!
//! A model that wants to wait (for a background job, a rate limit) would
//! otherwise run `sleep` in Bash, which blocks on interrupt and occupies an
//! exclusive slot. This tool is concurrency-safe, read-only and stops as soon
//! as the user interrupts or types a new message.

use std::time::Duration;

use baton_engine::{
    async_trait, InterruptBehavior, Progress, Tool, ToolContext, ToolDef, ToolError, ToolLogic,
    ToolOutput, WorkKind,
};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::registry::BuiltinConfig;

/// How often a sleeping call reports that it is still sleeping.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// The input of `Sleep`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SleepInput {
    /// How long to wait, in milliseconds.
    pub duration_ms: u64,
}

struct Sleep {
    max_ms: u64,
}

/// The `Sleep` tool; waits longer than `config.sleep_max_ms` are refused.
pub fn tool(config: &BuiltinConfig) -> Result<Tool, baton_engine::schema::InvalidSchema> {
    let def = ToolDef::new(
        "Sleep",
        "Waits for `duration_ms` milliseconds, then returns. Use it to wait for a \
         background task or an external event instead of running `sleep` in a \
         shell. It stops early when the user interrupts.",
    )
    .search_hint("wait pause delay for some time")
    // Rarely needed: offered by name until the model loads it, so its
    // definition does not cost every request.
    .should_defer(true)
    .interrupt(InterruptBehavior::Cancel)
    // A timer: no process, no CPU.
    .work_kind(WorkKind::Wait);
    Tool::typed::<SleepInput, _>(
        def,
        Sleep {
            max_ms: config.sleep_max_ms,
        },
    )
}

#[async_trait]
impl ToolLogic<SleepInput> for Sleep {
    fn is_concurrency_safe(&self, _input: &SleepInput) -> bool {
        true
    }

    fn is_read_only(&self, _input: &SleepInput) -> bool {
        true
    }

    fn label(&self, input: &SleepInput) -> Option<String> {
        Some(format!("Sleep({} ms)", input.duration_ms))
    }

    async fn validate_input(&self, input: &SleepInput, _ctx: &ToolContext) -> Result<(), String> {
        if input.duration_ms > self.max_ms {
            return Err(format!(
                "duration_ms {} is longer than the longest allowed sleep ({} ms); \
                 sleep in shorter steps or check on the task in between",
                input.duration_ms, self.max_ms
            ));
        }
        Ok(())
    }

    async fn call(&self, input: SleepInput, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let total = Duration::from_millis(input.duration_ms);
        let start = tokio::time::Instant::now();
        let deadline = start + total;
        loop {
            let now = tokio::time::Instant::now();
            if now >= deadline {
                break;
            }
            let wake = deadline.min(now + PROGRESS_EVERY);
            tokio::select! {
                _ = ctx.cancel.cancelled() => {
                    let slept = start.elapsed().as_millis();
                    return Ok(ToolOutput::text(format!(
                        "Stopped after {slept} ms of the requested {} ms.",
                        input.duration_ms
                    )));
                }
                _ = tokio::time::sleep_until(wake) => {}
            }
            if wake < deadline {
                let slept = start.elapsed().as_millis() as u64;
                ctx.progress.send(Progress {
                    message: format!("Slept {slept} of {} ms", input.duration_ms),
                    data: Some(serde_json::json!({
                        "elapsed_ms": slept,
                        "duration_ms": input.duration_ms,
                    })),
                });
            }
        }
        Ok(ToolOutput::text(format!(
            "Slept for {} ms.",
            input.duration_ms
        )))
    }
}

#[cfg(test)]
mod tests;
