//! The batch state, owned by the coordinator alone.
//!
//! One owner means no locks on the hot path and one place where every
//! decision about a call is made: added → queued → running → settled. A call
//! is settled exactly once, by the first of: its invocation reporting, its
//! invocation dying, or a decision that it will never start; the ordering
//! stage then sends its result in turn.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use baton_engine::extensions::Extensions;
use baton_engine::pipeline::messages;
use baton_engine::{
    CallResult, CancelReason, CancelScope, Context, InterruptBehavior, Outcome, Pipeline,
    PreparedCall, ProgressSink, TaggedEmit, ToolContext, ToolUse, WorkKind,
};
use ractor::ActorRef;
use tokio::task::AbortHandle;

use super::messages::CoordMsg;
use super::scheduler::{Queued, Scheduler};
use crate::event::{BatchSummary, Event, EventSink};
use crate::intake::Intake;
use crate::invocation::{Ending, InjectedFault, InvocationArgs, Start};
use crate::nesting::Children;
use crate::ordering::Ordering;
use crate::quiescence::QuiescenceGuard;
use crate::runtime::RuntimeInner;

/// A call whose first poll on the coordinator took longer than this goes
/// to a task from then on: its tool works the CPU, and its calls should
/// run beside each other, not one after the other on the coordinator.
const INLINE_BUDGET: std::time::Duration = std::time::Duration::from_micros(200);

pub(crate) enum Phase {
    Queued(Box<PreparedCall>),
    Running(CancelScope),
    Settled,
}

/// What the coordinator remembers of one call.
pub(crate) struct Slot {
    pub call_id: Arc<str>,
    /// Shared with the call's `call_queued` event (no copy per call).
    pub name: Arc<str>,
    pub label: String,
    pub safe: bool,
    pub work: WorkKind,
    pub read_only: bool,
    pub interrupt: InterruptBehavior,
    pub cancels_siblings: bool,
    pub phase: Phase,
}

impl BatchState {
    /// Gives the call `call_id` of tool `name` a slot that is settled from
    /// the start (it will not run here: refused past the call limit, or
    /// answered by the host), and says it was queued and finished with
    /// `outcome`. Returns its index.
    pub(crate) fn settled_slot(
        &mut self,
        call_id: &Arc<str>,
        name: Arc<str>,
        outcome: &baton_engine::Outcome,
    ) -> usize {
        let index = self.slots.len();
        self.slots.push(Slot {
            call_id: call_id.clone(),
            name,
            label: String::new(),
            safe: false,
            work: WorkKind::Process,
            read_only: false,
            interrupt: InterruptBehavior::Block,
            cancels_siblings: false,
            phase: Phase::Settled,
        });
        let name = &self.slots[index].name;
        self.lifecycle.queued(&self.sink, index, call_id, name);
        self.lifecycle.finished(&self.sink, index, call_id, outcome);
        index
    }
}

/// Everything needed to start a batch.
pub(crate) struct BatchSpec {
    pub runtime: Arc<RuntimeInner>,
    pub pipeline: Arc<Pipeline>,
    pub context: Context,
    pub scope: CancelScope,
    pub sink: EventSink,
    /// Services for the calls, without the nesting service (added per depth).
    pub services: Extensions,
    pub depth: usize,
    /// The batch's tracing span (see `crate::trace`).
    pub span: tracing::Span,
    /// Whether context changes outlive the batch (top-level batches of a
    /// session); a nested batch's changes stay in the nested batch.
    pub persist_context: bool,
    pub quiet: QuiescenceGuard,
    /// Every call the host handed over (see [`Intake`]).
    pub intake: Arc<Intake>,
}

pub(crate) struct BatchState {
    pub runtime: Arc<RuntimeInner>,
    pub pipeline: Arc<Pipeline>,
    pub context: Context,
    pub scope: CancelScope,
    pub sink: EventSink,
    pub services: Extensions,
    pub persist_context: bool,
    pub slots: Vec<Slot>,
    /// The call ids seen so far: a repeated id is refused (see
    /// `PreparedCall::reject_duplicate_id`).
    pub(super) ids: HashSet<Arc<str>>,
    pub(super) lifecycle: crate::lifecycle::Lifecycle,
    pub scheduler: Scheduler,
    pub ordering: Ordering,
    /// Invocations running, by call index: aborted if the coordinator
    /// stops before they report.
    pub running: HashMap<usize, AbortHandle>,
    /// Nested batches opened by this batch's calls.
    pub children: Arc<Children>,
    /// Calls whose result booking panics (fault injection in tests).
    doomed: Vec<usize>,
    /// Tools whose calls in this batch did not end during their first
    /// poll, or took long in it: their later calls go straight to a task
    /// (see [`crate::invocation::start`]), so a tool that starts processes
    /// or works the CPU never holds the coordinator, and its calls start
    /// side by side.
    no_inline: HashSet<Arc<str>>,
    /// Every call's progress goes out through this one emitter.
    progress: Arc<TaggedEmit>,
    pub ended: bool,
    pub finished: bool,
    /// Once set, no queued or later call starts; they settle with this reason.
    pub stop: Option<CancelReason>,
    /// A new-message interrupt arrived: later calls do not start.
    pub new_message: bool,
    pub summary: BatchSummary,
    /// Entries for PostToolBatch hooks, by call index.
    pub(super) batch_records: Vec<(usize, serde_json::Value)>,
    /// Parent of the calls' spans; closes when the coordinator stops.
    span: tracing::Span,
    intake: Arc<Intake>,
    _quiet: QuiescenceGuard,
}

impl BatchState {
    pub(crate) fn new(spec: BatchSpec, services: Extensions, children: Arc<Children>) -> Self {
        let config = &spec.runtime.config;
        let sink = spec.sink.clone();
        let progress: Arc<TaggedEmit> = Arc::new(move |index, call_id: &Arc<str>, progress| {
            sink.send(Event::Progress {
                index,
                call_id: call_id.clone(),
                progress,
            })
        });
        // What the pipeline adds to every call's services, added once.
        let services = spec.pipeline.call_services(&services);
        BatchState {
            scheduler: Scheduler::new(config.limits()),
            ordering: Ordering::new(
                config.message_budget_chars,
                spec.runtime.session.state_dir().to_path_buf(),
            ),
            pipeline: spec.pipeline,
            context: spec.context,
            scope: spec.scope,
            sink: spec.sink,
            services,
            persist_context: spec.persist_context,
            slots: Vec::new(),
            ids: HashSet::new(),
            lifecycle: crate::lifecycle::Lifecycle::new(config.call_events),
            running: HashMap::new(),
            doomed: Vec::new(),
            no_inline: HashSet::new(),
            progress,
            children,
            ended: false,
            finished: false,
            stop: None,
            new_message: false,
            summary: BatchSummary::default(),
            batch_records: Vec::new(),
            span: spec.span,
            intake: spec.intake,
            runtime: spec.runtime,
            _quiet: spec.quiet,
        }
    }

    /// What was posted to this batch's intake since the last wake-up.
    pub(crate) fn take_waiting(&self) -> Vec<CoordMsg> {
        self.intake.take()
    }

    pub(crate) fn add(&mut self, myself: &ActorRef<CoordMsg>, call: ToolUse, call_id: Arc<str>) {
        let index = self.slots.len();
        let max = self.runtime.config.max_calls_per_message;
        if index >= max {
            return self.refuse_over_limit(myself, call, call_id, max);
        }
        let mut prepared = self.pipeline.prepare(call);
        if !self.ids.insert(call_id.clone()) {
            prepared.reject_duplicate_id();
        }
        self.slots.push(Slot {
            call_id,
            name: Arc::from(prepared.call.name.as_str()),
            // Only the slot reads it (a failed call cancelling siblings).
            label: std::mem::take(&mut prepared.label),
            safe: prepared.safe,
            work: prepared.work,
            read_only: prepared.read_only,
            interrupt: prepared.interrupt,
            cancels_siblings: prepared.cancels_siblings,
            phase: Phase::Queued(Box::new(prepared)),
        });
        let slot = &self.slots[index];
        self.lifecycle
            .queued(&self.sink, index, &slot.call_id, &slot.name);
        let refusal = self
            .refusal()
            .or_else(|| self.new_message.then_some(CancelReason::NewMessage));
        if let Some(reason) = refusal {
            self.settle_unstarted(index, &reason);
        }
        self.pump(myself);
        // A call that could not start at once may wait long, behind many
        // others: it keeps its classification but not a parsed copy of its
        // input (see `PreparedCall::compact`). Calls that start at once are
        // not touched, so they are parsed once.
        if let Some(Slot {
            phase: Phase::Queued(prepared),
            ..
        }) = self.slots.get_mut(index)
        {
            prepared.compact();
        }
    }

    /// Why a queued call may no longer start, if so. (A new-message
    /// interrupt is not among them: queued calls that block on it still run;
    /// only calls added after it are refused, in [`Self::add`].)
    fn refusal(&self) -> Option<CancelReason> {
        if let Some(reason) = &self.stop {
            return Some(reason.clone());
        }
        if self.scope.is_cancelled() {
            return self.scope.reason();
        }
        None
    }

    /// Settles a queued call that will never run.
    pub(crate) fn settle_unstarted(&mut self, index: usize, reason: &CancelReason) {
        let Some(slot) = self.slots.get_mut(index) else {
            return;
        };
        if let Phase::Queued(prepared) = std::mem::replace(&mut slot.phase, Phase::Settled) {
            let result = self.pipeline.never_started(&prepared, reason);
            self.lifecycle
                .finished(&self.sink, index, &slot.call_id, &result.outcome);
            self.ordering.complete(index, result, &self.sink);
        }
    }

    /// Settles every queued call for which `pick` says so.
    pub(crate) fn settle_queued_where(
        &mut self,
        reason: &CancelReason,
        pick: impl Fn(&Slot) -> bool,
    ) {
        let queued: Vec<usize> = (self.scheduler_next()..self.slots.len())
            .filter(|&i| matches!(self.slots[i].phase, Phase::Queued(_)) && pick(&self.slots[i]))
            .collect();
        for i in queued {
            self.settle_unstarted(i, reason);
        }
    }

    fn scheduler_next(&self) -> usize {
        // Queued calls all lie at or after the first unsettled result.
        self.ordering.sent()
    }

    /// Starts every call the scheduling rules allow now.
    pub(crate) fn pump(&mut self, myself: &ActorRef<CoordMsg>) {
        loop {
            let slots = &self.slots;
            let next = self.scheduler.next_start(|i| {
                slots.get(i).map(|s| match s.phase {
                    Phase::Queued(_) => Queued::Waiting {
                        safe: s.safe,
                        kind: s.work,
                    },
                    _ => Queued::Gone,
                })
            });
            let Some(index) = next else { break };
            if let Some(reason) = self.refusal() {
                // The scope was cancelled from above (a parent call, shutdown).
                let slot = &self.slots[index];
                self.scheduler.finished(slot.safe, slot.work);
                self.settle_unstarted(index, &reason);
                continue;
            }
            if let Some((ending, ended)) = self.start(myself, index) {
                // Ended during its first poll: booked now, and the loop
                // goes on to the calls its slot lets start.
                self.book(index, ending, Some(ended));
            }
        }
        self.maybe_finish(myself);
    }

    /// Starts call `index`; its ending, and when, if it ended at once.
    fn start(
        &mut self,
        myself: &ActorRef<CoordMsg>,
        index: usize,
    ) -> Option<(Ending, std::time::Instant)> {
        let scope = self.scope.child();
        let slot = &mut self.slots[index];
        let Phase::Queued(mut prepared) =
            std::mem::replace(&mut slot.phase, Phase::Running(scope.clone()))
        else {
            return None;
        };
        // One clock read for the lifecycle event and the inline budget.
        let now = std::time::Instant::now();
        self.lifecycle
            .started(&self.sink, index, &slot.call_id, now);
        let ctx = ToolContext {
            call_id: slot.call_id.to_string(),
            context: self.context.clone(),
            session: self.runtime.session.clone(),
            cancel: scope,
            progress: ProgressSink::tagged(self.progress.clone(), index, slot.call_id.clone()),
            services: self.services.clone(),
            // Decided by the permission stage.
            approval: Default::default(),
        };
        let fault = match &self.runtime.fault_hook {
            Some(hook) => hook(&prepared.call),
            None => InjectedFault::None,
        };
        if fault == InjectedFault::PanicCoordinator {
            self.doomed.push(index);
        }
        let inline = self.no_inline.is_empty() || !self.no_inline.contains(&slot.name);
        if inline {
            // Its pipeline starts now, on this thread: one clock read serves.
            prepared.starts_at(now);
        }
        let args = InvocationArgs {
            pipeline: self.pipeline.clone(),
            call: *prepared,
            ctx,
            fault,
            span: self.span.clone(),
        };
        let began = inline.then_some(now);
        // A task only when the call must wait: see `crate::invocation` for
        // why, and for how a task's end reaches this coordinator exactly once.
        match crate::invocation::start(myself, index, args, inline) {
            Start::Done(ending) => {
                // One clock read for the inline budget and the call's end.
                let ended = std::time::Instant::now();
                if began.is_some_and(|t| ended.saturating_duration_since(t) > INLINE_BUDGET) {
                    self.no_inline.insert(self.slots[index].name.clone());
                }
                Some((ending, ended))
            }
            Start::Running(task) => {
                if inline {
                    self.no_inline.insert(self.slots[index].name.clone());
                }
                self.running.insert(index, task);
                None
            }
        }
    }

    /// An invocation task ended (its report, exactly once per task).
    pub(crate) fn invocation_stopped(
        &mut self,
        myself: &ActorRef<CoordMsg>,
        index: usize,
        ending: Ending,
    ) {
        if self.running.remove(&index).is_none() {
            return;
        }
        self.book(index, ending, None);
        self.pump(myself);
    }

    /// Books how a started call ended; a call that ended without a result
    /// gets the engine's "lost" result.
    /// `ended` is when it ended, if the caller read the clock then.
    fn book(&mut self, index: usize, ending: Ending, ended: Option<std::time::Instant>) {
        let result = match ending {
            Ending::Result(result) => result,
            Ending::Lost(why) => Box::new(self.lost_result(index, why)),
        };
        self.finish_call(index, result, ended);
    }

    /// Books a result of a call that was running.
    fn finish_call(
        &mut self,
        index: usize,
        mut result: Box<CallResult>,
        ended: Option<std::time::Instant>,
    ) {
        let safe = self.slots[index].safe;
        self.children.forget(&self.slots[index].call_id);
        self.scheduler.finished(safe, self.slots[index].work);
        self.slots[index].phase = Phase::Settled;
        if let Some(modifier) = result.modifier.take() {
            if !safe {
                self.apply_modifier(modifier, &mut result);
            }
        }
        self.lifecycle.finished_at(
            &self.sink,
            index,
            &self.slots[index].call_id,
            &result.outcome,
            ended,
        );
        if let Some(record) = result.batch_record.take() {
            self.batch_records.push((index, record));
        }
        self.check_siblings(index, &result);
        if self.doomed.contains(&index) {
            panic!("injected coordinator fault");
        }
        self.ordering.complete(index, result, &self.sink);
    }

    /// The result of a call whose invocation died without reporting one.
    fn lost_result(&self, index: usize, why: &str) -> CallResult {
        let slot = &self.slots[index];
        let (text, outcome) = match &slot.phase {
            Phase::Running(scope) if scope.is_cancelled() => (
                messages::cancelled(
                    &scope.reason().unwrap_or(CancelReason::Shutdown),
                    true,
                ),
                Outcome::Cancelled { started: true },
            ),
            _ => (
                messages::wrap(&format!(
                    "The engine lost this `{}` call: {why}. Its action may have partly happened; check its effects before running it again.",
                    slot.name
                )),
                Outcome::Internal,
            ),
        };
        CallResult::new(
            slot.call_id.to_string(),
            slot.name.to_string(),
            vec![baton_engine::ContentBlock::text(text)],
            true,
            outcome,
        )
    }

    pub(crate) fn maybe_finish(&mut self, myself: &ActorRef<CoordMsg>) {
        if self.finished
            || !self.ended
            || !self.running.is_empty()
            || self.ordering.sent() < self.slots.len()
        {
            return;
        }
        self.finished = true;
        self.summary.calls = self.slots.len();
        self.summary.stop_turn = self.ordering.stop_turn.clone();
        crate::trace::batch_done(&self.span, &self.summary);
        if self.pipeline.has_batch_hooks() && !self.batch_records.is_empty() {
            super::batch_hooks::finish_after_hooks(self, myself);
            return;
        }
        self.sink.send(Event::Done(Box::new(self.summary.clone())));
        myself.stop(None);
    }
}

impl Drop for BatchState {
    /// A coordinator that stops before finishing (it failed, or the runtime
    /// went away) still owes every call a result: settle them all here, in
    /// order, so the host's invariant holds even then.
    fn drop(&mut self) {
        // Invocations still running belong to nobody once their coordinator
        // is gone (ractor used to stop linked children here).
        for (_, task) in self.running.drain() {
            task.abort();
        }
        if self.finished {
            // Nothing posted from now on would be read.
            self.intake.close();
            return;
        }
        self.scope
            .cancel(CancelReason::Other("the batch coordinator stopped".into()));
        // Go by what the ordering stage holds, not by the calls' phases: a
        // failure may have struck between settling a call and handing its
        // result over. Calls still waiting in the intake are known by it.
        let admitted = self.intake.close();
        // Every call went through the intake, so it lists them all.
        let total = admitted.len().max(self.slots.len());
        let reason = CancelReason::Other("the batch coordinator stopped unexpectedly".into());
        for (index, id) in admitted.iter().enumerate().skip(self.ordering.sent()) {
            if self.ordering.has(index) {
                continue;
            }
            if index >= self.slots.len() {
                // Never seen by the coordinator: it cannot have started.
                let result = CallResult::new(
                    id.to_string(),
                    String::new(),
                    vec![baton_engine::ContentBlock::text(messages::cancelled(
                        &reason, false,
                    ))],
                    true,
                    Outcome::Cancelled { started: false },
                );
                self.ordering.complete(index, result, &self.sink);
            } else if matches!(self.slots[index].phase, Phase::Queued(_)) {
                self.settle_unstarted(index, &reason);
            } else {
                let result = self.lost_result(index, "its coordinator stopped unexpectedly");
                self.slots[index].phase = Phase::Settled;
                self.ordering.complete(index, result, &self.sink);
            }
        }
        self.summary.calls = total;
        crate::trace::batch_done(&self.span, &self.summary);
        self.sink.send(Event::Done(Box::new(self.summary.clone())));
    }
}
