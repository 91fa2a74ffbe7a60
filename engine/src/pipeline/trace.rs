//! The `call` tracing span: one per call, with the time each phase took.
//!
//! Fields (milliseconds): `queue_ms` (added → pipeline start, the wait for
//! the scheduler), `validate_ms` (schema and `validate_input`), `hooks_ms`
//! (PreToolUse hooks), `permission_ms` (rules, PermissionRequest hooks and
//! the wait for the host's answer), `exec_ms` (the tool itself); plus
//! `call_id`, `tool` and `outcome`. A phase the call never reached stays
//! empty. The span is a child of whatever span is current (the runtime
//! makes that the batch's), and nothing is recorded unless a subscriber
//! listens: the cost without one is a few atomic loads.

use std::time::{Duration, Instant};

use tracing::field::Empty;
use tracing::Span;

use baton_tool::call::{CallResult, ToolUse};

pub(super) fn call_span(call: &ToolUse, queued: Duration) -> Span {
    crate::metrics::phase("queue", queued);
    tracing::info_span!(
        "call",
        call_id = %call.id,
        tool = %call.name,
        queue_ms = ms(queued),
        validate_ms = Empty,
        hooks_ms = Empty,
        permission_ms = Empty,
        exec_ms = Empty,
        outcome = Empty,
    )
}

/// Records how long the phase `field` took since `start`, on the current
/// (call) span; returns its end, the next phase's start (one clock read
/// per phase boundary, not two).
pub(super) fn phase(field: &'static str, start: Instant) -> Instant {
    phase_at(field, start, Instant::now())
}

/// [`phase`] with its end already read; returns `end`.
pub(super) fn phase_at(field: &'static str, start: Instant, end: Instant) -> Instant {
    let took = end.saturating_duration_since(start);
    let span = Span::current();
    // Without a subscriber the span is disabled: nothing to round.
    if !span.is_disabled() {
        span.record(field, ms(took));
    }
    // The metric's label is the span field without its unit.
    crate::metrics::phase(field.strip_suffix("_ms").unwrap_or(field), took);
    end
}

/// Records the call's outcome kind (`success`, `denied`, …).
pub(super) fn outcome(result: &CallResult) {
    let span = Span::current();
    if span.is_disabled() {
        return;
    }
    let kind = serde_json::to_value(&result.outcome)
        .ok()
        .and_then(|v| v.get("kind").and_then(|k| k.as_str()).map(str::to_string))
        .unwrap_or_default();
    span.record("outcome", kind.as_str());
    tracing::debug!(outcome = %kind, is_error = result.is_error, "call finished");
}

fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1000.0 * 1000.0).round() / 1000.0
}
