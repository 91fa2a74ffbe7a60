//! What a coordinator is told.

use std::sync::Arc;

use baton_engine::ToolUse;

use crate::config::InterruptKind;
use crate::invocation::Ending;

#[derive(Debug)]
pub(crate) enum CoordMsg {
    /// Take what waits in the intake: one wake-up for everything posted
    /// there since the last (see `crate::intake`). The only message the
    /// host's side casts to the actor itself.
    Wake,
    /// A call streamed in, with its id as noted in the intake.
    Add(ToolUse, Arc<str>),
    /// A call the host answered itself (see `coordinator::answered`), with
    /// its id as noted in the intake.
    Answered(Box<baton_engine::CallResult>, Arc<str>),
    /// The message ended: no more calls will come.
    End,
    Interrupt(InterruptKind),
    /// The host dropped its handle before ending the batch: stop everything
    /// and finish, so nothing is left running for nobody.
    HostGone,
    /// Stop one call (by id), leaving its siblings alone.
    CancelCall(String, baton_engine::CancelReason),
    /// The host's deadline for one call: stop it if it runs that long.
    Deadline(String, std::time::Duration),
    /// The invocation of call `index` ended (sent by the invocation itself,
    /// exactly once; see [`crate::invocation`]).
    Finished(usize, Ending),
}
