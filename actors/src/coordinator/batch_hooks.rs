//! The end of a batch with PostToolBatch hooks: every result is out; the
//! hooks run over all of them, then `done` carries what they said. The
//! actor stays alive meanwhile, so the batch is not quiescent while a hook
//! process runs.

use ractor::ActorRef;

use super::messages::CoordMsg;
use super::state::BatchState;
use crate::event::Event;

pub(super) fn finish_after_hooks(state: &mut BatchState, myself: &ActorRef<CoordMsg>) {
    let mut records = std::mem::take(&mut state.batch_records);
    records.sort_by_key(|(index, _)| *index);
    let calls = records.into_iter().map(|(_, r)| r).collect();
    let pipeline = state.pipeline.clone();
    let session = state.runtime.session.clone();
    let context = state.context.clone();
    let sink = state.sink.clone();
    let mut summary = state.summary.clone();
    let myself = myself.clone();
    // An interrupt of the batch ends its PostToolBatch hooks.
    let scope = state.scope.clone();
    tokio::spawn(async move {
        let outcome = pipeline
            .post_batch_until(&session, &context, calls, Some(&scope))
            .await;
        summary.additional_context = outcome.additional_context;
        summary.diagnostics = outcome.diagnostics;
        summary.system_messages = outcome.system_messages;
        if summary.stop_turn.is_none() {
            summary.stop_turn = outcome.stop_turn;
        }
        sink.send(Event::Done(Box::new(summary)));
        myself.stop(None);
    });
}
