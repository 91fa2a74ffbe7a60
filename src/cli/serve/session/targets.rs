//! Which batch and which call a host line names: `interrupt`, `cancel`
//! and `background` target a running message by the host's id or its
//! number, or the latest one, and a call by its id.

use serde_json::{json, Value};

use super::Session;
use crate::cli::serve::strict::{BackgroundLine, BatchRef, CancelLine, InterruptLine};
use crate::cli::CliError;

impl Session {
    /// An `interrupt` line: the named batch, or the latest one.
    pub(super) fn interrupt(&mut self, line: &InterruptLine) -> Result<(), CliError> {
        let kind = line.interrupt.as_deref().unwrap_or("cancel");
        match kind.parse::<baton::InterruptKind>() {
            Ok(kind) => match self.interrupt_target(line.batch.as_ref()) {
                Ok(id) => {
                    if let Some(b) = self.batches.get(&id) {
                        b.handle.interrupt(kind);
                    }
                    Ok(())
                }
                Err(problem) => self.error(problem),
            },
            Err(e) => self.error(e),
        }
    }

    /// A `background` line (see [`super::super::background`]).
    pub(super) fn background(&mut self, line: &BackgroundLine) -> Result<(), CliError> {
        // A call named without its batch is looked for in every running one.
        let holder = match (&line.call_id, &line.batch) {
            (Some(call), None) => self
                .batches
                .iter()
                .find(|(_, b)| b.calls.contains(call))
                .map(|(id, _)| *id),
            _ => None,
        };
        let id = match holder.map_or_else(|| self.interrupt_target(line.batch.as_ref()), Ok) {
            Ok(id) => id,
            Err(problem) => return self.error(problem),
        };
        let ids: Vec<String> = self
            .batches
            .get(&id)
            .map(|b| b.calls.clone())
            .unwrap_or_default()
            .into_iter()
            .filter(|c| line.call_id.as_ref().is_none_or(|wanted| wanted == c))
            .collect();
        if self.engine.send_to_background(&ids).is_empty() {
            let label = self.label(id);
            return self.error(super::super::background::nothing_sent(
                line.call_id.as_deref(),
                &label,
            ));
        }
        Ok(())
    }

    /// Why an `add` naming `host_id` cannot go to the open message.
    pub(super) fn open_conflict(&self, host_id: Option<&str>) -> Option<String> {
        let open = self.open?;
        let open_host = self.batches.get(&open).and_then(|b| b.host_id.as_deref());
        match host_id {
            Some(wanted) if Some(wanted) != open_host => Some(format!(
                "`add` names batch `{wanted}`, but the open message is batch {}; send `end` \
                 first. This line was ignored.",
                self.label(open)
            )),
            _ => None,
        }
    }

    /// The batch an `interrupt` line names (its number or the host's id),
    /// or the latest one; an error text when that batch is unknown or has
    /// finished.
    pub(super) fn interrupt_target(&self, named: Option<&BatchRef>) -> Result<u64, String> {
        let id = match named {
            None => {
                let latest = self.latest.ok_or("there is no message to interrupt")?;
                if !self.batches.contains_key(&latest) {
                    return Err(format!(
                        "the latest message (batch {latest}) has already finished; name the batch \
                         to interrupt with `batch`"
                    ));
                }
                latest
            }
            Some(BatchRef::Name(host)) => *self
                .host_ids
                .get(host)
                .ok_or_else(|| format!("no running batch `{host}` (unknown or finished)"))?,
            Some(BatchRef::Number(n)) => Some(*n)
                .filter(|id| self.batches.contains_key(id))
                .ok_or_else(|| format!("no running batch {n} (unknown or finished)"))?,
        };
        Ok(id)
    }

    /// How lines name batch `id`: the host's id when it gave one.
    pub(super) fn label(&self, id: u64) -> Value {
        match self.batches.get(&id).and_then(|b| b.host_id.as_ref()) {
            Some(host) => json!(host),
            None => json!(id),
        }
    }

    /// A `cancel` line: stops one call, in the named batch or whichever
    /// running batch holds it.
    pub(super) fn cancel(&mut self, line: &CancelLine) -> Result<(), CliError> {
        let id = line.id.as_str();
        let holder = match &line.batch {
            None => self
                .batches
                .iter()
                .find(|(_, b)| b.calls.iter().any(|c| c == id))
                .map(|(n, _)| *n)
                .ok_or_else(|| format!("no running batch has a call `{id}`")),
            Some(named) => self.interrupt_target(Some(named)),
        };
        let batch = match holder {
            Ok(batch) => batch,
            Err(problem) => return self.error(problem),
        };
        let Some(b) = self.batches.get(&batch) else {
            return Ok(());
        };
        if !b.calls.iter().any(|c| c == id) || b.results.iter().any(|r| r.call_id == id) {
            let label = self.label(batch);
            return self.error(format!(
                "batch {label} has no unfinished call `{id}`, so nothing was cancelled"
            ));
        }
        b.handle.cancel_call(id);
        Ok(())
    }
}
