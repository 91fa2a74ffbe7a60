//! The `batch` tracing span: one per message (and per nested batch, as a
//! child of the call that opened it). Its calls' `call` spans (made by the
//! pipeline) are its children, so a subscriber sees the tree the way the
//! batches nest. Fields: `depth`, `parent_call`, then at the end `calls`, `interrupted`
//! and `cancelled_by`. The span closes when the batch's coordinator stops,
//! so its lifetime is the batch's.

use tracing::field::Empty;
use tracing::Span;

use crate::event::BatchSummary;

/// A batch span under the current span; a nested batch names the call
/// that opened it (`parent_call`), since it may be opened from another
/// task than that call's (serve's subagents are), where the call's span is
/// not current.
pub(crate) fn batch_span(depth: usize, parent_call: Option<&str>) -> Span {
    tracing::info_span!(
        "batch",
        depth,
        parent_call = parent_call,
        calls = Empty,
        interrupted = Empty,
        cancelled_by = Empty
    )
}

/// Records how the batch ended.
pub(crate) fn batch_done(span: &Span, summary: &BatchSummary) {
    if span.is_disabled() {
        return;
    }
    span.record("calls", summary.calls);
    if let Some(kind) = summary.interrupted {
        span.record("interrupted", tracing::field::debug(kind));
    }
    if let Some(by) = &summary.cancelled_by {
        span.record("cancelled_by", by.as_str());
    }
}
