//! The ordering stage: results leave strictly in call order.
//!
//! A fast later call must not overtake a slow earlier one in the result
//! stream (the model API pairs results with calls by position in practice),
//! so completions wait here until every earlier call has left. Progress never
//! passes through here.
//!
//! The per-message result budget (SPEC §9) is applied here too, at the last
//! moment a result can still change: when it is about to leave. Results
//! already sent are fixed, so the stage spills the largest of the results it
//! still holds until the total fits; a decision, once sent, never changes.

use std::path::PathBuf;
use std::sync::Arc;

use baton_engine::pipeline::messages;
use baton_engine::pipeline::size::{spill_result, PREVIEW_BYTES};
use baton_engine::{CallResult, ContentBlock, Outcome};

use crate::event::{Event, EventSink};

/// Results up to this size are never spilled for the budget: the notice
/// that would replace them (a preview of up to [`PREVIEW_BYTES`] plus the
/// file's path and sizes) is about as long, so spilling would only add a
/// file (and, past the budget, one file per later result).
const MIN_SPILL_CHARS: usize = PREVIEW_BYTES + 1_000;

/// A result waiting for its turn.
enum Held {
    Made(Made),
    /// A refusal past the message's call limit (see
    /// `coordinator::over_limit`), kept as the call's id and name and made
    /// when it leaves. Such refusals wait behind every call that runs, and
    /// there may be ten times as many of them; a made result is about
    /// 700 bytes on the heap, this is the id and the name.
    OverLimit {
        call_id: Arc<str>,
        name: String,
        max: usize,
        /// The refusal's length, counted once for the budget.
        chars: usize,
    },
}

struct Made {
    /// Boxed as it arrived from the call and as it leaves in its event:
    /// held, sent and received without copying.
    result: Box<CallResult>,
    chars: usize,
    /// False once spilled, or when it cannot be (images, a failed write).
    spillable: bool,
}

impl Held {
    fn chars(&self) -> usize {
        match self {
            Held::Made(made) => made.chars,
            Held::OverLimit { chars, .. } => *chars,
        }
    }

    /// Whether the budget may spill it.
    fn candidate(&self) -> bool {
        matches!(self, Held::Made(m) if m.spillable && m.chars > MIN_SPILL_CHARS)
    }

    fn into_result(self) -> Box<CallResult> {
        match self {
            Held::Made(made) => made.result,
            Held::OverLimit {
                call_id, name, max, ..
            } => Box::new(CallResult::new(
                call_id.as_ref(),
                name,
                vec![ContentBlock::text(messages::over_call_limit(max))],
                true,
                Outcome::InvalidInput,
            )),
        }
    }
}

pub(crate) struct Ordering {
    /// Index of the next result to send.
    next: usize,
    held: Vec<Option<Held>>,
    held_chars: usize,
    sent_chars: usize,
    budget: usize,
    state_dir: PathBuf,
    /// Held results the budget may spill. When none is, the budget check
    /// does not scan the held ones: many small results held behind a slow
    /// call (refusals past the call limit) made each send O(held).
    candidates: usize,
    /// First request of a hook to end the turn, from results sent so far.
    pub stop_turn: Option<String>,
}

impl Ordering {
    pub(crate) fn new(budget: usize, state_dir: PathBuf) -> Self {
        Ordering {
            next: 0,
            held: Vec::new(),
            held_chars: 0,
            sent_chars: 0,
            budget,
            state_dir,
            candidates: 0,
            stop_turn: None,
        }
    }

    /// Results sent so far (they are `0..sent()`).
    pub(crate) fn sent(&self) -> usize {
        self.next
    }

    /// Whether the result of `index` is held or was sent.
    pub(crate) fn has(&self, index: usize) -> bool {
        index < self.next || matches!(self.held.get(index), Some(Some(_)))
    }

    /// Takes the result of call `index` and sends every result that is now
    /// next in line. A second result for the same call is dropped: the first
    /// one is the call's result.
    pub(crate) fn complete(
        &mut self,
        index: usize,
        result: impl Into<Box<CallResult>>,
        sink: &EventSink,
    ) {
        if self.has(index) {
            return;
        }
        let result = result.into();
        let chars: usize = result.content.iter().map(|b| b.char_len()).sum();
        let spillable = !result.content.iter().any(|b| b.is_image());
        let made = Made {
            result,
            chars,
            spillable,
        };
        self.hold(index, Held::Made(made), sink);
    }

    /// Call `index` was refused past the message's limit of `max` calls:
    /// its refusal is made when it leaves.
    pub(crate) fn refuse_over_limit(
        &mut self,
        index: usize,
        call_id: Arc<str>,
        name: String,
        max: usize,
        sink: &EventSink,
    ) {
        let chars = messages::over_call_limit(max).chars().count();
        let held = Held::OverLimit {
            call_id,
            name,
            max,
            chars,
        };
        self.hold(index, held, sink);
    }

    fn hold(&mut self, index: usize, held: Held, sink: &EventSink) {
        if self.has(index) {
            return;
        }
        if self.held.len() <= index {
            self.held.resize_with(index + 1, || None);
        }
        self.candidates += usize::from(held.candidate());
        self.held_chars += held.chars();
        self.held[index] = Some(held);
        self.flush(sink);
    }

    fn flush(&mut self, sink: &EventSink) {
        while let Some(slot) = self.held.get_mut(self.next) {
            if slot.is_none() {
                return;
            }
            self.fit_budget();
            let Some(held) = self.held.get_mut(self.next).and_then(Option::take) else {
                return;
            };
            self.candidates -= usize::from(held.candidate());
            let chars = held.chars();
            self.held_chars -= chars;
            self.sent_chars += chars;
            let result = held.into_result();
            if self.stop_turn.is_none() {
                self.stop_turn.clone_from(&result.stop_turn);
            }
            sink.send(Event::Result {
                index: self.next,
                result,
            });
            self.next += 1;
        }
    }

    /// Spills the largest held results until sent + held fits the budget, or
    /// nothing more can be spilled.
    fn fit_budget(&mut self) {
        while self.sent_chars + self.held_chars > self.budget && self.candidates > 0 {
            let largest = self
                .held
                .iter_mut()
                .skip(self.next)
                .flatten()
                .filter(|h| h.candidate())
                .filter_map(|h| match h {
                    Held::Made(made) => Some(made),
                    Held::OverLimit { .. } => None,
                })
                .max_by_key(|h| h.chars);
            let Some(held) = largest else { return };
            held.spillable = false;
            self.candidates -= 1;
            let before = held.result.content.clone();
            if spill_result(&mut held.result, &self.state_dir) {
                let now: usize = held.result.content.iter().map(|b| b.char_len()).sum();
                if now >= held.chars {
                    // A very long state path: the notice is no shorter.
                    held.result.content = before;
                    continue;
                }
                self.held_chars = self.held_chars - held.chars + now;
                held.chars = now;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_engine::{ContentBlock, Outcome};

    fn result(id: &str, chars: usize) -> CallResult {
        CallResult::new(
            id,
            "T",
            vec![ContentBlock::text("x".repeat(chars))],
            false,
            Outcome::Success,
        )
    }

    fn drain(rx: &crossbeam_channel::Receiver<Event>) -> Vec<(usize, CallResult)> {
        rx.try_iter()
            .filter_map(|e| match e {
                Event::Result { index, result } => Some((index, *result)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn holds_later_results_until_earlier_ones_arrive() {
        let (sink, rx) = EventSink::blocking();
        let mut o = Ordering::new(1_000_000, std::env::temp_dir());
        o.complete(2, result("c", 1), &sink);
        o.complete(1, result("b", 1), &sink);
        assert!(drain(&rx).is_empty());
        o.complete(0, result("a", 1), &sink);
        let ids: Vec<String> = drain(&rx).into_iter().map(|(_, r)| r.call_id).collect();
        assert_eq!(ids, ["a", "b", "c"]);
        // A duplicate is ignored.
        o.complete(1, result("b2", 1), &sink);
        assert!(drain(&rx).is_empty());
    }

    #[test]
    fn budget_spills_largest_first_and_never_revisits_sent_results() {
        let dir = tempfile_dir();
        let (sink, rx) = EventSink::blocking();
        let mut o = Ordering::new(100_000, dir.clone());
        o.complete(0, result("a", 40_000), &sink);
        // Sent as is: within budget at the time.
        let first = drain(&rx);
        assert_eq!(first[0].1.text().len(), 40_000);
        o.complete(2, result("c", 50_000), &sink);
        o.complete(1, result("b", 30_000), &sink);
        let rest = drain(&rx);
        assert_eq!(rest.len(), 2);
        // 40k + 30k + 50k > 100k: the largest held one (c) is spilled, b fits.
        assert_eq!(rest[0].1.text().len(), 30_000);
        assert!(rest[1].1.text().contains("too large"));
        assert!(dir.join("tool-results").join("c.txt").exists());
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn past_the_budget_small_results_stay_as_they_are() {
        let dir = tempfile_dir().join("small");
        let (sink, rx) = EventSink::blocking();
        let mut o = Ordering::new(10, dir.clone());
        for i in 0..50 {
            o.complete(i, result(&format!("r{i}"), 17), &sink);
        }
        let sent = drain(&rx);
        assert_eq!(sent.len(), 50);
        assert!(sent.iter().all(|(_, r)| r.text() == "x".repeat(17)));
        assert!(
            !dir.join("tool-results").exists(),
            "no file for a tiny result"
        );
    }

    fn tempfile_dir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "baton-ordering-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }
}
