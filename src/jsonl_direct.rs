//! The lines every call makes, written straight from their events: the
//! lifecycle lines (`call_queued`, `call_started`, `call_waiting_approval`,
//! `call_finished`, `permission_cancelled`) and the `result` line. Every
//! host path (`serve`, `run --events`, `agent --events`, subagent lines)
//! writes them here, so they have one renderer.
//!
//! The bytes are those of a compact `serde_json::Value` object: keys in
//! sorted order, no spaces. Building each line as a tree (a `String` per key
//! and per text value, then the tree walked to print it) cost more than a
//! no-op call itself; these writers allocate nothing. A host adds its own
//! fields (`batch`, `agent_id`, `agent_batch`, `request_id`) as [`Tags`],
//! merged in key order.

use std::io::{self, Write};

use baton_actors::{CallEvent, CallState};
use baton_engine::wire::answer::write_tool_result_block;
use baton_engine::CallResult;
use serde_json::Value;

/// Fields a host adds to a line, sorted by key, none of them a key the
/// line has itself. Keys are fixed ASCII names (written unescaped).
pub type Tags<'a> = [(&'a str, &'a Value)];

/// Writes `"key":value` pairs in sorted key order, merging in the tags.
struct Fields<'a, 't, W: Write> {
    out: &'a mut W,
    first: bool,
    /// Tags not written yet (all of them sort after the last key written).
    tags: &'t Tags<'t>,
}

impl<'a, 't, W: Write> Fields<'a, 't, W> {
    fn open(out: &'a mut W, tags: &'t Tags<'t>) -> io::Result<Self> {
        debug_assert!(tags.windows(2).all(|w| w[0].0 < w[1].0), "tags unsorted");
        out.write_all(b"{")?;
        Ok(Fields {
            out,
            first: true,
            tags,
        })
    }

    /// Writes `"key":` after the tags that sort before `key`. `key` must
    /// need no JSON escape (the keys here are fixed ASCII names).
    fn key(&mut self, key: &str) -> io::Result<&mut W> {
        self.tags_before(Some(key))?;
        self.bare_key(key)?;
        Ok(self.out)
    }

    fn bare_key(&mut self, key: &str) -> io::Result<()> {
        if !self.first {
            self.out.write_all(b",")?;
        }
        self.first = false;
        self.out.write_all(b"\"")?;
        self.out.write_all(key.as_bytes())?;
        self.out.write_all(b"\":")
    }

    /// The tags before `key` (all of them with `None`).
    fn tags_before(&mut self, key: Option<&str>) -> io::Result<()> {
        while let Some(((tag, value), rest)) = self.tags.split_first() {
            if key.is_some_and(|key| *tag >= key) {
                break;
            }
            self.tags = rest;
            self.bare_key(tag)?;
            serde_json::to_writer(&mut *self.out, value).map_err(io::Error::from)?;
        }
        Ok(())
    }

    fn value<T: serde::Serialize + ?Sized>(&mut self, key: &str, value: &T) -> io::Result<()> {
        let out = self.key(key)?;
        serde_json::to_writer(out, value).map_err(io::Error::from)
    }

    fn close(mut self) -> io::Result<()> {
        self.tags_before(None)?;
        self.out.write_all(b"}")
    }
}

/// Writes the lifecycle line of `call` (no newline) with `tags`. A
/// `permission_cancelled` line gets its `request_id` (the host's number of
/// the withdrawn prompt) as a tag.
pub fn write_call_line(out: &mut impl Write, call: &CallEvent, tags: &Tags<'_>) -> io::Result<()> {
    // Keys in sorted order: duration_ms, index, outcome, tool, tool_use_id,
    // type.
    let mut fields = Fields::open(out, tags)?;
    if let CallState::Finished { duration, .. } = &call.state {
        fields.value("duration_ms", &(duration.as_secs_f64() * 1000.0))?;
    }
    if let Some(index) = call.index {
        fields.value("index", &index)?;
    }
    match &call.state {
        // `Outcome` serialises `kind` before `started`: sorted already.
        CallState::Finished { outcome, .. } => fields.value("outcome", outcome)?,
        CallState::Queued { tool } => fields.value("tool", &**tool)?,
        // Started, WaitingApproval, PermissionCancelled: nothing of their
        // own (a later state's fields would need a row in the protocol).
        _ => {}
    }
    fields.value("tool_use_id", &*call.call_id)?;
    fields.value("type", call.state.wire_name())?;
    fields.close()
}

/// Writes the `result` line of `result` (no newline) with `tags`: its
/// `index` in the batch (absent for a nested result without one), and the
/// ready `tool_result` block written straight from the result.
pub fn write_result_line(
    out: &mut impl Write,
    index: Option<usize>,
    result: &CallResult,
    tags: &Tags<'_>,
) -> io::Result<()> {
    // Keys in sorted order: block, details, diagnostics, index, outcome,
    // system_messages, tool_use_id, type.
    let mut fields = Fields::open(out, tags)?;
    write_tool_result_block(fields.key("block")?, result)?;
    // Facts for the host beside the block (duration, spill file, files
    // written); the block itself is unchanged.
    let details = &*result.details;
    if details.spilled.is_none() && details.files_written.is_empty() && details.shell.is_none() {
        // At most `duration_ms` (every call that started has it): one key,
        // so the struct's own order is the sorted one.
        if !details.is_empty() {
            fields.value("details", details)?;
        }
    } else {
        // A struct of several fields: through a `Value`, whose map prints
        // them sorted.
        let details = serde_json::to_value(details).map_err(io::Error::from)?;
        fields.value("details", &details)?;
    }
    fields.value("diagnostics", &result.diagnostics)?;
    if let Some(index) = index {
        fields.value("index", &index)?;
    }
    fields.value("outcome", &result.outcome)?;
    // Hook `systemMessage`s: for the user, never sent to the model.
    if !result.system_messages.is_empty() {
        fields.value("system_messages", &result.system_messages)?;
    }
    fields.value("tool_use_id", &result.call_id)?;
    fields.value("type", "result")?;
    fields.close()
}

#[cfg(test)]
#[path = "jsonl_direct_tests.rs"]
mod tests;
