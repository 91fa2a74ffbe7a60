//! A call that runs now: its numbered output, its end, and its cancellation.
//!
//! Whoever asks about a running call (the request that started it, a retry
//! after a dropped connection, `tasks/result`) gets a [`Join`]: the output
//! numbered after the last number it saw, then the end. Output is kept in a
//! bounded ring; a reader that fell further behind than the ring holds is
//! told which numbers were dropped instead of silently missing them.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::Ended;

/// The shared state of one running call.
#[derive(Debug)]
pub(crate) struct Live {
    ring: Mutex<Ring>,
    /// Bumped on every change, so joiners wake.
    version: watch::Sender<u64>,
    cancel: CancellationToken,
}

#[derive(Debug)]
struct Ring {
    /// (number, text), oldest first.
    kept: VecDeque<(u64, String)>,
    bytes: usize,
    limit: usize,
    /// The number the next output gets (numbers start at 1).
    next: u64,
    started: bool,
    ended: Option<Ended>,
}

/// One step of a running call, as a joiner sees it.
#[derive(Clone, Debug, PartialEq)]
pub enum Update {
    /// Output number `seq`.
    Output {
        /// Its number: 1, 2, 3, … per call.
        seq: u64,
        /// What the call showed.
        text: String,
    },
    /// Output numbered `first..=last` was dropped by the output limits
    /// before this reader asked for it.
    Dropped {
        /// The first number dropped.
        first: u64,
        /// The last number dropped.
        last: u64,
    },
    /// The call ended; nothing follows.
    Ended(Ended),
}

impl Live {
    pub(crate) fn new(limit: usize) -> Arc<Live> {
        Arc::new(Live {
            ring: Mutex::new(Ring {
                kept: VecDeque::new(),
                bytes: 0,
                limit,
                next: 1,
                started: false,
                ended: None,
            }),
            version: watch::channel(0).0,
            cancel: CancellationToken::new(),
        })
    }

    fn ring(&self) -> MutexGuard<'_, Ring> {
        self.ring.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn bump(&self) {
        self.version.send_modify(|v| *v += 1);
    }

    pub(crate) fn cancel_token(&self) -> CancellationToken {
        self.cancel.clone()
    }

    pub(crate) fn mark_started(&self) {
        self.ring().started = true;
    }

    pub(crate) fn started(&self) -> bool {
        self.ring().started
    }

    /// Adds output; returns its number.
    pub(crate) fn push(&self, text: String) -> u64 {
        let seq = {
            let mut ring = self.ring();
            let seq = ring.next;
            ring.next += 1;
            ring.bytes += text.len();
            ring.kept.push_back((seq, text));
            // Keep at least the newest item, however large.
            while ring.bytes > ring.limit && ring.kept.len() > 1 {
                if let Some((_, old)) = ring.kept.pop_front() {
                    ring.bytes -= old.len();
                }
            }
            seq
        };
        self.bump();
        seq
    }

    /// The newest output and its number (0 when there was none).
    pub(crate) fn last(&self) -> (u64, String) {
        let ring = self.ring();
        ring.kept
            .back()
            .map(|(n, t)| (*n, t.clone()))
            .unwrap_or((0, String::new()))
    }

    /// Ends the call; the first end wins.
    pub(crate) fn end(&self, ended: Ended) -> bool {
        let first = {
            let mut ring = self.ring();
            if ring.ended.is_some() {
                false
            } else {
                ring.ended = Some(ended);
                true
            }
        };
        if first {
            self.bump();
        }
        first
    }
}

/// A reader of one running call, from a point in its output.
#[derive(Debug)]
pub struct Join {
    live: Arc<Live>,
    rx: watch::Receiver<u64>,
    cursor: u64,
}

impl Join {
    pub(crate) fn new(live: Arc<Live>, after: u64) -> Join {
        let rx = live.version.subscribe();
        Join {
            live,
            rx,
            cursor: after,
        }
    }

    /// The number of the last output this reader was given.
    pub fn cursor(&self) -> u64 {
        self.cursor
    }

    /// The next step after the cursor, waiting for it: output in order, a
    /// note of dropped output, and last the end (repeated if asked again).
    pub async fn next(&mut self) -> Update {
        loop {
            // Seen before looking, so a change after the look wakes us.
            self.rx.borrow_and_update();
            if let Some(update) = self.peek() {
                return update;
            }
            if self.rx.changed().await.is_err() {
                // The sender lives in `live`, which we hold: cannot happen.
                // Should it, what is there is the answer.
                return self
                    .peek()
                    .unwrap_or(Update::Ended(Ended::Lost(crate::Lost {
                        started: true,
                        output: String::new(),
                        why: "the call's state went away".into(),
                    })));
            }
        }
    }

    fn peek(&mut self) -> Option<Update> {
        let ring = self.live.ring();
        if let Some(&(oldest, _)) = ring.kept.front() {
            // `after` comes from the client: any number, u64::MAX included.
            if oldest > self.cursor.saturating_add(1) {
                let first = self.cursor + 1;
                self.cursor = oldest - 1;
                return Some(Update::Dropped {
                    first,
                    last: oldest - 1,
                });
            }
        }
        if let Some((seq, text)) = ring.kept.iter().find(|(n, _)| *n > self.cursor) {
            self.cursor = *seq;
            return Some(Update::Output {
                seq: *seq,
                text: text.clone(),
            });
        }
        ring.ended.clone().map(Update::Ended)
    }

    /// Asks the call to stop (whoever runs it watches the token).
    pub fn cancel(&self) {
        self.live.cancel.cancel();
    }

    /// Waits for the end, skipping output.
    pub async fn ended(mut self) -> Ended {
        loop {
            if let Update::Ended(e) = self.next().await {
                return e;
            }
        }
    }
}
