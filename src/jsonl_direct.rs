//! The most frequent JSON lines written straight from their events, with
//! the bytes [`crate::jsonl`]'s `Value` lines print (compact, keys in
//! sorted order).
//!
//! `baton serve` writes three lifecycle lines and a result line per call.
//! Building each as a `serde_json::Value` map (a `String` per key and per
//! text value, then the tree walked to print it) cost more than the no-op
//! call itself; these writers allocate nothing. The unit tests compare
//! their bytes with the `Value` lines' for every state and field.

use std::io::{self, Write};

use baton_actors::{CallEvent, CallState};
use baton_engine::wire::answer::write_tool_result_block;
use baton_engine::CallResult;
use serde_json::Value;

/// Writes `"key":` after a `{` (first field) or a `,`.
struct Fields<'a, W: Write> {
    out: &'a mut W,
    first: bool,
}

impl<'a, W: Write> Fields<'a, W> {
    fn open(out: &'a mut W) -> io::Result<Self> {
        out.write_all(b"{")?;
        Ok(Fields { out, first: true })
    }

    /// `key` must need no JSON escape (the keys here are fixed ASCII names).
    fn key(&mut self, key: &str) -> io::Result<&mut W> {
        if !self.first {
            self.out.write_all(b",")?;
        }
        self.first = false;
        self.out.write_all(b"\"")?;
        self.out.write_all(key.as_bytes())?;
        self.out.write_all(b"\":")?;
        Ok(self.out)
    }

    fn value<T: serde::Serialize + ?Sized>(&mut self, key: &str, value: &T) -> io::Result<()> {
        let out = self.key(key)?;
        serde_json::to_writer(out, value).map_err(io::Error::from)
    }

    fn close(self) -> io::Result<()> {
        self.out.write_all(b"}")
    }
}

/// Whether [`write_call_line`] writes the line of `state`; other states
/// (a withdrawn permission request, which carries a `request_id`) and
/// states added later go through [`crate::jsonl::call_json`].
pub fn writes_call_state(state: &CallState) -> bool {
    matches!(
        state,
        CallState::Queued { .. }
            | CallState::Started
            | CallState::WaitingApproval
            | CallState::Finished { .. }
    )
}

/// Writes the lifecycle line of `call` (no newline): the bytes of
/// [`crate::jsonl::call_json`] with `batch` set to the batch's label, when
/// given. For states [`writes_call_state`] refuses, it writes that `Value`.
pub fn write_call_line(
    out: &mut impl Write,
    call: &CallEvent,
    batch: Option<&Value>,
) -> io::Result<()> {
    if !writes_call_state(&call.state) {
        let mut line = crate::jsonl::call_json(call);
        if let Some(label) = batch {
            line["batch"] = label.clone();
        }
        return serde_json::to_writer(out, &line).map_err(io::Error::from);
    }
    // Keys in sorted order: batch, duration_ms, index, outcome, tool,
    // tool_use_id, type.
    let mut fields = Fields::open(out)?;
    if let Some(label) = batch {
        fields.value("batch", label)?;
    }
    if let CallState::Finished { duration, .. } = &call.state {
        fields.value("duration_ms", &(duration.as_secs_f64() * 1000.0))?;
    }
    if let Some(index) = call.index {
        fields.value("index", &index)?;
    }
    match &call.state {
        // `Outcome` serialises `kind` before `started`: sorted already.
        CallState::Finished { outcome, .. } => fields.value("outcome", outcome)?,
        CallState::Queued { tool } => fields.value("tool", tool.as_str())?,
        _ => {}
    }
    fields.value("tool_use_id", &*call.call_id)?;
    fields.value("type", call.state.wire_name())?;
    fields.close()
}

/// Writes the `result` line of `result` (no newline): the bytes of
/// [`crate::jsonl::result_json`] with `batch` set to the batch's label,
/// when given, and the block written straight from the result.
pub fn write_result_line(
    out: &mut impl Write,
    index: usize,
    result: &CallResult,
    batch: Option<&Value>,
) -> io::Result<()> {
    // Keys in sorted order: batch, block, details, diagnostics, index,
    // outcome, system_messages, tool_use_id, type.
    let mut fields = Fields::open(out)?;
    if let Some(label) = batch {
        fields.value("batch", label)?;
    }
    write_tool_result_block(fields.key("block")?, result)?;
    let details = &*result.details;
    if details.spilled.is_none() && details.files_written.is_empty() && details.shell.is_none() {
        // At most `duration_ms` (every call that started has it): one key,
        // so the struct's own order is the sorted one.
        if !details.is_empty() {
            fields.value("details", details)?;
        }
    } else {
        // A struct whose fields a `Value` prints sorted: through the tree,
        // so the order stays the `Value` line's.
        let details = serde_json::to_value(details).map_err(io::Error::from)?;
        fields.value("details", &details)?;
    }
    fields.value("diagnostics", &result.diagnostics)?;
    fields.value("index", &index)?;
    fields.value("outcome", &result.outcome)?;
    if !result.system_messages.is_empty() {
        fields.value("system_messages", &result.system_messages)?;
    }
    fields.value("tool_use_id", &result.call_id)?;
    fields.value("type", "result")?;
    fields.close()
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_engine::Outcome;
    use serde_json::json;
    use std::time::Duration;

    fn direct(call: &CallEvent, batch: Option<&Value>) -> String {
        let mut out = Vec::new();
        write_call_line(&mut out, call, batch).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn tree(call: &CallEvent, batch: Option<&Value>) -> String {
        let mut line = crate::jsonl::call_json(call);
        if let Some(label) = batch {
            line["batch"] = label.clone();
        }
        line.to_string()
    }

    #[test]
    fn result_lines_are_the_value_lines_bytes() {
        use baton_engine::ContentBlock;
        let text = |t: &str| vec![ContentBlock::text(t)];
        let plain = CallResult::new(
            "toolu_\"1\"",
            "Sleep",
            text("slept \u{0}\n"),
            false,
            Outcome::Success,
        );
        let mut timed = CallResult::new("t", "Sleep", text(""), false, Outcome::Success);
        timed.details.duration_ms = Some(0);
        let mut spilled = CallResult::new("s", "Read", text("x"), true, Outcome::ToolError);
        spilled.details.duration_ms = Some(5);
        spilled.details.spilled = Some("/tmp/a \"b\"".into());
        spilled.details.files_written = vec!["/w".into()];
        let mut rich = CallResult::new(
            "r2",
            "Bash",
            text("out"),
            true,
            Outcome::Cancelled { started: true },
        );
        rich.diagnostics = vec!["a \"note\"".into(), String::new()];
        rich.system_messages = vec!["hook says\thi".into()];
        rich.details.duration_ms = Some(12);
        rich.content.push(ContentBlock::text("more"));
        for result in [plain, timed, spilled, rich] {
            for label in [None, Some(json!(9)), Some(json!("b\\1"))] {
                let mut out = Vec::new();
                write_result_line(&mut out, 42, &result, label.as_ref()).unwrap();
                let mut line = crate::jsonl::result_json(42, &result);
                if let Some(label) = &label {
                    line["batch"] = label.clone();
                }
                assert_eq!(String::from_utf8(out).unwrap(), line.to_string());
            }
        }
    }

    #[test]
    fn call_lines_are_the_value_lines_bytes() {
        let outcomes = [
            Outcome::Success,
            Outcome::ToolError,
            Outcome::Denied,
            Outcome::Cancelled { started: true },
            Outcome::Cancelled { started: false },
            Outcome::Internal,
        ];
        let mut states = vec![
            CallState::Queued {
                tool: "Sle\"ep\u{7}é".into(),
            },
            CallState::Started,
            CallState::WaitingApproval,
            CallState::PermissionCancelled { prompt: 7 },
        ];
        for (i, outcome) in outcomes.into_iter().enumerate() {
            let micros = [0, 1, 999, 1_234_567, 86_400_000_000, 3][i];
            states.push(CallState::Finished {
                outcome,
                duration: Duration::from_nanos(micros * 1000 + 17),
            });
        }
        let labels = [
            None,
            Some(json!(3)),
            Some(json!("host \"b\"\n")),
            Some(json!(u64::MAX)),
        ];
        for state in states {
            for index in [None, Some(0), Some(12_345)] {
                for id in ["toolu_01", "id with \"quotes\" and \\ \u{1F600}"] {
                    let call = CallEvent {
                        index,
                        call_id: id.into(),
                        state: state.clone(),
                    };
                    for label in &labels {
                        assert_eq!(
                            direct(&call, label.as_ref()),
                            tree(&call, label.as_ref()),
                            "{call:?} {label:?}"
                        );
                    }
                }
            }
        }
    }
}
