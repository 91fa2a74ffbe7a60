//! A command hook that goes async by itself: Claude Code's
//! `AsyncHookJSONOutput`. A hook whose first stdout line is
//! `{"async": true}` (optionally with `asyncTimeout`) tells Claude Code to
//! stop waiting: the call goes on at once, the hook runs on in the
//! background and its later output is ignored, as for `async: true` in
//! settings. The agent SDK gives `asyncTimeout` no unit; Baton reads it as
//! milliseconds (the unit of Claude Code's other `*Timeout` numbers in
//! JSON, like MCP's `timeout`), and without it keeps the hook's own timeout.

use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::oneshot;

/// The first line of a hook's stdout says it went async; with how long it
/// may run on, if it said.
pub(crate) fn async_answer(first_line: &[u8]) -> Option<Option<Duration>> {
    let value: Value = serde_json::from_slice(first_line).ok()?;
    if value.get("async") != Some(&Value::Bool(true)) {
        return None;
    }
    Some(
        value
            .get("asyncTimeout")
            .and_then(Value::as_f64)
            .filter(|ms| ms.is_finite() && *ms > 0.0)
            .map(|ms| Duration::from_secs_f64(ms.min(86_400_000.0) / 1000.0)),
    )
}

/// Reads `reader` to its end like `read_capped`, and as soon as the first
/// line is complete, tells `went_async` whether it was an async answer.
pub(crate) async fn read_watching<R: AsyncRead + Unpin>(
    reader: Option<R>,
    cap: usize,
    went_async: oneshot::Sender<Option<Duration>>,
) -> String {
    let mut signal = Some(went_async);
    let Some(mut reader) = reader else {
        return String::new();
    };
    let mut kept = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let n = match reader.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let room = cap.saturating_sub(kept.len());
        kept.extend_from_slice(&chunk[..n.min(room)]);
        if signal.is_some() {
            if let Some(end) = kept.iter().position(|b| *b == b'\n') {
                if let Some(timeout) = async_answer(&kept[..end]) {
                    if let Some(tx) = signal.take() {
                        let _ = tx.send(timeout);
                    }
                } else {
                    signal = None;
                }
            } else if kept.len() >= cap {
                signal = None;
            }
        }
    }
    String::from_utf8_lossy(&kept).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_async_true_object_goes_async() {
        assert_eq!(async_answer(br#"{"async": true}"#), Some(None));
        assert_eq!(
            async_answer(br#"{"async":true,"asyncTimeout":1500}"#),
            Some(Some(Duration::from_millis(1500)))
        );
        assert_eq!(async_answer(br#"{"async": false}"#), None);
        assert_eq!(async_answer(br#"{"async": "true"}"#), None);
        assert_eq!(async_answer(b"async"), None);
        assert_eq!(
            async_answer(br#"{"async":true,"asyncTimeout":-5}"#),
            Some(None)
        );
    }
}
