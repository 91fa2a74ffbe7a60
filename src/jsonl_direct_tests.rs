//! The call and result lines against fixed bytes (compact, keys sorted, as
//! hosts have always read them) and against the fields
//! docs/serve-protocol.md names for each line.

use super::*;
use baton_engine::{ContentBlock, Outcome};
use serde_json::json;
use std::collections::BTreeSet;
use std::time::Duration;

fn call_line(index: Option<usize>, id: &str, state: CallState, tags: &Tags<'_>) -> String {
    let call = CallEvent {
        index,
        call_id: id.into(),
        state,
    };
    let mut out = Vec::new();
    write_call_line(&mut out, &call, tags).unwrap();
    String::from_utf8(out).unwrap()
}

fn result_line(index: Option<usize>, result: &CallResult, tags: &Tags<'_>) -> String {
    let mut out = Vec::new();
    write_result_line(&mut out, index, result, tags).unwrap();
    String::from_utf8(out).unwrap()
}

fn text(t: &str) -> Vec<ContentBlock> {
    vec![ContentBlock::text(t)]
}

#[test]
fn call_lines_have_fixed_bytes() {
    let batch = json!(3);
    let host = json!("host \"b\"\n");
    let request = json!(7);
    let queued = CallState::Queued {
        tool: "Sle\"ep\u{7}é".into(),
    };
    assert_eq!(
        call_line(Some(0), "toolu_01", queued.clone(), &[("batch", &batch)]),
        r#"{"batch":3,"index":0,"tool":"Sle\"ep\u0007é","tool_use_id":"toolu_01","type":"call_queued"}"#
    );
    assert_eq!(
        call_line(None, "a\\b \u{1F600}", queued, &[]),
        r#"{"tool":"Sle\"ep\u0007é","tool_use_id":"a\\b 😀","type":"call_queued"}"#
    );
    assert_eq!(
        call_line(Some(12_345), "t", CallState::Started, &[("batch", &host)]),
        r#"{"batch":"host \"b\"\n","index":12345,"tool_use_id":"t","type":"call_started"}"#
    );
    assert_eq!(
        call_line(None, "t", CallState::WaitingApproval, &[("batch", &batch)]),
        r#"{"batch":3,"tool_use_id":"t","type":"call_waiting_approval"}"#
    );
    // The request id sorts between the call's own keys.
    assert_eq!(
        call_line(
            Some(2),
            "t",
            CallState::PermissionCancelled { prompt: 99 },
            &[("batch", &batch), ("request_id", &request)]
        ),
        r#"{"batch":3,"index":2,"request_id":7,"tool_use_id":"t","type":"permission_cancelled"}"#
    );
    let finished = |outcome, micros| CallState::Finished {
        outcome,
        duration: Duration::from_micros(micros),
    };
    assert_eq!(
        call_line(Some(1), "t", finished(Outcome::Success, 1500), &[]),
        r#"{"duration_ms":1.5,"index":1,"outcome":{"kind":"success"},"tool_use_id":"t","type":"call_finished"}"#
    );
    assert_eq!(
        call_line(
            Some(1),
            "t",
            finished(Outcome::Cancelled { started: false }, 0),
            &[("batch", &batch)]
        ),
        r#"{"batch":3,"duration_ms":0.0,"index":1,"outcome":{"kind":"cancelled","started":false},"tool_use_id":"t","type":"call_finished"}"#
    );
}

#[test]
fn result_lines_have_fixed_bytes() {
    let batch = json!(9);
    let plain = CallResult::new(
        "toolu_\"1\"",
        "Sleep",
        text("slept \u{0}\n"),
        false,
        Outcome::Success,
    );
    assert_eq!(
        result_line(Some(42), &plain, &[("batch", &batch)]),
        r#"{"batch":9,"block":{"content":[{"text":"slept \u0000\n","type":"text"}],"tool_use_id":"toolu_\"1\"","type":"tool_result"},"diagnostics":[],"index":42,"outcome":{"kind":"success"},"tool_use_id":"toolu_\"1\"","type":"result"}"#
    );
    let mut timed = CallResult::new("t", "Sleep", text(""), false, Outcome::Success);
    timed.details.duration_ms = Some(0);
    assert_eq!(
        result_line(Some(0), &timed, &[]),
        r#"{"block":{"content":[{"text":"","type":"text"}],"tool_use_id":"t","type":"tool_result"},"details":{"duration_ms":0},"diagnostics":[],"index":0,"outcome":{"kind":"success"},"tool_use_id":"t","type":"result"}"#
    );
    // Several details: their keys sorted too.
    let mut spilled = CallResult::new("s", "Read", text("x"), true, Outcome::ToolError);
    spilled.details.duration_ms = Some(5);
    spilled.details.spilled = Some("/tmp/a \"b\"".into());
    spilled.details.files_written = vec!["/w".into()];
    assert_eq!(
        result_line(Some(1), &spilled, &[]),
        r#"{"block":{"content":[{"text":"x","type":"text"}],"is_error":true,"tool_use_id":"s","type":"tool_result"},"details":{"duration_ms":5,"files_written":["/w"],"spilled":"/tmp/a \"b\""},"diagnostics":[],"index":1,"outcome":{"kind":"tool_error"},"tool_use_id":"s","type":"result"}"#
    );
    // A subagent's result: its agent's tags; a nested one without index.
    let mut rich = CallResult::new(
        "r2",
        "Bash",
        text("out"),
        true,
        Outcome::Cancelled { started: true },
    );
    rich.diagnostics = vec!["a \"note\"".into(), String::new()];
    rich.system_messages = vec!["hook says\thi".into()];
    rich.content.push(ContentBlock::text("more"));
    let (number, agent) = (json!(2), json!("agent-1"));
    let tags = [("agent_batch", &number), ("agent_id", &agent)];
    assert_eq!(
        result_line(None, &rich, &tags),
        r#"{"agent_batch":2,"agent_id":"agent-1","block":{"content":[{"text":"out","type":"text"},{"text":"more","type":"text"}],"is_error":true,"tool_use_id":"r2","type":"tool_result"},"diagnostics":["a \"note\"",""],"outcome":{"kind":"cancelled","started":true},"system_messages":["hook says\thi"],"tool_use_id":"r2","type":"result"}"#
    );
}

/// The backquoted names in the fields column of `kind`'s row of the
/// "Baton → host" table.
fn documented_fields(kind: &str) -> BTreeSet<String> {
    let docs = include_str!("../docs/serve-protocol.md");
    let start = format!("| `{kind}` | ");
    let row = docs
        .lines()
        .find(|l| l.starts_with(&start))
        .unwrap_or_else(|| panic!("no row for {kind}"));
    let fields = row[start.len()..].split(" | ").next().unwrap();
    fields
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

fn keys(line: &str) -> BTreeSet<String> {
    let value: Value = serde_json::from_str(line).unwrap();
    value.as_object().unwrap().keys().cloned().collect()
}

#[test]
fn lines_carry_the_fields_the_protocol_documents() {
    let batch = json!(1);
    let request = json!(1);
    let finished = CallState::Finished {
        outcome: Outcome::Success,
        duration: Duration::from_millis(3),
    };
    let states = [
        (
            Some(0),
            CallState::Queued {
                tool: "Sleep".into(),
            },
            vec![],
        ),
        (Some(0), CallState::Started, vec![]),
        (None, CallState::WaitingApproval, vec![]),
        (
            None,
            CallState::PermissionCancelled { prompt: 1 },
            vec![("request_id", &request)],
        ),
        (Some(0), finished, vec![]),
    ];
    for (index, state, extra) in states {
        let kind = state.wire_name();
        let mut tags = vec![("batch", &batch)];
        tags.extend(extra);
        let line = call_line(index, "t", state, &tags);
        // Every field the row names is on the line, and nothing else but
        // the line's `type`.
        let mut expected = documented_fields(kind);
        expected.insert("type".into());
        assert_eq!(keys(&line), expected, "{kind}");
    }
    // The result row also names the fields of `details` and the outcome
    // kinds: every key written is among them, and the fields every
    // result has are there.
    let mut result = CallResult::new("t", "Sleep", text("x"), false, Outcome::Success);
    result.details.duration_ms = Some(1);
    result.system_messages = vec!["m".into()];
    let line = result_line(Some(0), &result, &[("batch", &batch)]);
    let documented = documented_fields("result");
    for key in keys(&line) {
        assert!(key == "type" || documented.contains(&key), "{key}");
    }
    for key in [
        "batch",
        "index",
        "tool_use_id",
        "outcome",
        "block",
        "diagnostics",
    ] {
        assert!(keys(&line).contains(key), "{key}");
    }
}
