//! Calls handed to the open message: straight to the engine, or, in a
//! journaled session (`--journal`), through the journal first, which may
//! answer a call without running it (see `serve::journal`).

use baton::engine::wire::WireFormat;
use baton::engine::ToolUse;

use super::Session;
use crate::cli::serve::journal::Decision;
use crate::cli::CliError;

impl Session {
    /// Adds `call`, with the host's deadline for it in milliseconds.
    pub(super) async fn add_timed(
        &mut self,
        format: WireFormat,
        call: ToolUse,
        deadline_ms: Option<u64>,
    ) -> Result<(), CliError> {
        self.add_all(format, std::iter::once(call), deadline_ms)
            .await
    }

    /// Adds `calls`, in order, to the open message (opened by the caller).
    pub(super) async fn add_all(
        &mut self,
        format: WireFormat,
        calls: impl IntoIterator<Item = ToolUse>,
        deadline_ms: Option<u64>,
    ) -> Result<(), CliError> {
        let Some(batch) = self.open else {
            return Ok(());
        };
        self.set_format(format);
        match self.journal.clone() {
            Some(journal) => {
                for decision in journal.decide(calls).await {
                    self.hand_over(batch, decision, deadline_ms).await?;
                }
            }
            None => {
                for call in calls {
                    self.hand_over(batch, Decision::Run(call, None), deadline_ms)
                        .await?;
                }
            }
        }
        Ok(())
    }

    /// Gives batch `batch` one call: to run, or answered.
    async fn hand_over(
        &mut self,
        batch: u64,
        decision: Decision,
        deadline_ms: Option<u64>,
    ) -> Result<(), CliError> {
        let Some(b) = self.batches.get_mut(&batch) else {
            return Ok(());
        };
        // The index the engine gives the call: one per call it took.
        let index = b.calls.len();
        let (call_id, added) = match decision {
            Decision::Run(call, runner) => {
                if let Some(runner) = runner {
                    b.journal.running(index, runner);
                }
                let call_id = call.id.clone();
                let added = match deadline_ms {
                    Some(ms) => b
                        .handle
                        .add_with_deadline(call, std::time::Duration::from_millis(ms)),
                    None => b.handle.add(call),
                };
                if let Err(e) = &added {
                    let why = format!("Baton could not hand it to the engine: {e}");
                    b.journal.not_handed_over(index, why).await;
                }
                (call_id, added)
            }
            Decision::Answer(result, tag) => {
                let call_id = result.call_id.clone();
                let added = b.handle.add_answered(result);
                if added.is_ok() {
                    b.journal.answered(index, tag);
                }
                (call_id, added)
            }
        };
        match added {
            Ok(()) => b.calls.push(call_id),
            Err(e) => self.error(e.to_string())?,
        }
        Ok(())
    }
}
