//! What a session writes for its batches' events: the lines of each call
//! (written straight from the event), permission requests, and the `done`
//! line with the batch's answer.

use baton::jsonl::{summary_json, write_event};
use baton::{Event, PermissionPrompt};
use futures::{FutureExt, StreamExt};
use serde_json::{json, Value};

use super::{no_host, Session};
use crate::cli::serve::output::{write_line, write_line_with_raw, write_made};
use crate::cli::serve::wire::Wire;
use crate::cli::CliError;

impl Session {
    /// The next event of a running batch; pending while there is none
    /// (forever when no batch runs). Cancel-safe: the streams keep their
    /// state between calls.
    pub(crate) async fn next_batch_event(&mut self) -> (Option<u64>, Event) {
        match self.streams.next().await {
            Some(event) => event,
            None => std::future::pending().await,
        }
    }

    /// A batch's event that is ready now, without waiting.
    pub(crate) fn ready_batch_event(&mut self) -> Option<(Option<u64>, Event)> {
        self.streams.next().now_or_never().flatten()
    }

    pub(crate) fn emit(&mut self, batch: Option<u64>, event: Event) -> Result<(), CliError> {
        if let Event::PermissionRequest(prompt) = &event {
            if self.input_closed {
                prompt.answer(no_host());
                return Ok(());
            }
        }
        if let Event::Call(call) = &event {
            if let baton::CallState::PermissionCancelled { prompt } = call.state {
                return self.permission_cancelled(batch, call, prompt);
            }
        }
        let request_id = match &event {
            Event::PermissionRequest(prompt) => {
                let id = self.next_prompt;
                self.next_prompt += 1;
                self.prompts.insert(id, PermissionPrompt::clone(prompt));
                Some(id)
            }
            _ => None,
        };
        let label = batch.map(|id| self.label(id));
        // A call answered from the journal says so on its result line.
        let journal = match &event {
            Event::Result { index, .. } => batch
                .and_then(|id| self.batches.get_mut(&id))
                .and_then(|b| b.journal.take_tag(*index)),
            _ => None,
        };
        let tags: &[(&str, &Value)] = match (&label, &journal) {
            (Some(label), Some(journal)) => &[("batch", label), ("journal", journal)],
            (Some(label), None) => &[("batch", label)],
            (None, Some(journal)) => &[("journal", journal)],
            (None, None) => &[],
        };
        // The lines of every call (three lifecycle lines and the result)
        // are written straight from the event (`jsonl_direct`), the rest
        // by `jsonl`.
        match event {
            Event::Result { index, result } => {
                let written = write_made(|out| {
                    baton::jsonl_direct::write_result_line(out, Some(index), &result, tags)
                });
                if let Some(b) = batch.and_then(|id| self.batches.get_mut(&id)) {
                    // Room for every call added so far at once: a result is
                    // large, and doubling copied them all again each time.
                    let more = b.calls.len().saturating_sub(b.results.len()).max(1);
                    b.results.reserve(more);
                    b.results.push(*result);
                }
                written
            }
            Event::Done(summary) => self.done(batch, label, &summary),
            _ => write_made(|out| write_event(out, &event, request_id, tags)),
        }
    }

    /// The `done` line of `batch`: its summary, and the answer written
    /// straight from the results (never built as a tree).
    fn done(
        &mut self,
        batch: Option<u64>,
        label: Option<Value>,
        summary: &baton::BatchSummary,
    ) -> Result<(), CliError> {
        let finished = batch.and_then(|id| self.batches.remove(&id));
        if let Some(host) = finished.as_ref().and_then(|b| b.host_id.as_ref()) {
            self.host_ids.remove(host);
        }
        let loaded = finished
            .as_ref()
            .map(|b| self.engine.loaded_since(b.loaded_mark))
            .unwrap_or_default();
        let (format, results, native) = finished
            .map(|b| (b.format.unwrap_or_default(), b.results, b.native))
            .unwrap_or_default();
        let mut line = json!({"type": "done", "summary": summary_json(summary)});
        let mut answer = None;
        if results.is_empty() {
            // The model APIs reject an empty user message: there is
            // nothing to send back.
            line["message"] = Value::Null;
            line["reason"] = json!(
                "the message had no tool calls, so there are no results to send; \
                 do not send an empty user message"
            );
        } else {
            // PostToolBatch hooks' context follows the results, the
            // way Claude Code adds it (only Anthropic has a place).
            let context = &summary.additional_context;
            answer = Some(Wire::answer(format, &results, native, context));
        }
        if !loaded.is_empty() {
            line["loaded_tools"] = json!(loaded);
        }
        if let Some(label) = label {
            line["batch"] = label;
        }
        match answer {
            Some(bytes) => write_line_with_raw(&line, "message", &bytes),
            None => write_line(&line),
        }
    }

    /// A pending request was withdrawn (its call was cancelled): the host
    /// closes its prompt; answering it now is an error.
    fn permission_cancelled(
        &mut self,
        batch: Option<u64>,
        call: &baton::CallEvent,
        prompt: u64,
    ) -> Result<(), CliError> {
        let Some(request_id) = self
            .prompts
            .iter()
            .find_map(|(id, p)| (p.id() == prompt).then_some(*id))
        else {
            // Never shown (the session was closing) or already answered.
            return Ok(());
        };
        self.prompts.remove(&request_id);
        let label = batch.map(|id| self.label(id));
        let request_id = json!(request_id);
        let mut tags = Vec::with_capacity(2);
        if let Some(label) = &label {
            tags.push(("batch", label));
        }
        tags.push(("request_id", &request_id));
        write_made(|out| baton::jsonl_direct::write_call_line(out, call, &tags))
    }
}
