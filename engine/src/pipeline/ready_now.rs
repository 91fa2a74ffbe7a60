//! Polling a stage once before watching it for cancellation.
//!
//! A stage that may wait (the tool's validation, PreToolUse hooks, the tool
//! itself) runs in a `select!` against the call's cancellation, so that an
//! interrupt ends it. The watch costs room in the call's future (the
//! cancellation future and the select's state) on every call, though most
//! stages of most calls end on their first poll, before anyone could
//! cancel them. So a stage is polled once on its own; only one that is
//! still pending gets the watch, boxed.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

/// Polls `stage` once: its output if that poll ended it. On `None` the
/// stage was polled with the task's waker and goes on; it must not be
/// polled again after `Some`.
pub(super) fn ready_now<F: Future + ?Sized>(
    mut stage: Pin<&mut F>,
) -> impl Future<Output = Option<F::Output>> + '_ {
    std::future::poll_fn(move |cx| {
        Poll::Ready(match stage.as_mut().poll(cx) {
            Poll::Ready(out) => Some(out),
            Poll::Pending => None,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_ready_stage_gives_its_output_and_a_pending_one_goes_on() {
        let mut done = std::pin::pin!(async { 7 });
        assert_eq!(ready_now(done.as_mut()).await, Some(7));

        let (tx, rx) = tokio::sync::oneshot::channel::<u8>();
        let mut waiting = std::pin::pin!(rx);
        assert_eq!(ready_now(waiting.as_mut()).await, None);
        tx.send(3).unwrap_or_default();
        // The same stage, polled on after its first pending poll.
        assert_eq!(waiting.await.ok(), Some(3));
    }
}
