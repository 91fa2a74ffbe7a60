//! Progress of a running command.
//!
//! Quiet at first (most commands finish in well under two seconds and a
//! progress line would only flicker), then once a second: the last lines
//! printed, the time so far and how much output there is. The host shows
//! it; the model never sees it.

use std::time::Duration;

use baton_engine::{Progress, ProgressSink};
use serde_json::json;

use super::output::{human_bytes, Capture};

/// Lines of output carried in each progress event.
const LAST_LINES: usize = 5;

pub(crate) struct Reporter {
    sink: ProgressSink,
    pub(crate) delay: Duration,
    pub(crate) every: Duration,
}

impl Reporter {
    pub(crate) fn new(sink: ProgressSink, delay: Duration, every: Duration) -> Self {
        Reporter { sink, delay, every }
    }

    pub(crate) fn report(&self, capture: &Capture, elapsed: Duration) {
        let lines = capture.last_lines(LAST_LINES);
        let message = format!(
            "Running for {:.0} s; {} of output, {} lines",
            elapsed.as_secs_f64(),
            human_bytes(capture.total_bytes()),
            capture.total_lines()
        );
        self.sink.send(Progress {
            message,
            data: Some(json!({
                "elapsed_ms": u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
                "bytes": capture.total_bytes(),
                "lines": capture.total_lines(),
                "last_lines": lines,
            })),
        });
    }
}
