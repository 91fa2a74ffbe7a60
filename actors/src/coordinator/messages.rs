//! What a coordinator is told.

use crate::config::InterruptKind;
use crate::invocation::Ending;

#[derive(Debug)]
pub enum CoordMsg {
    /// Calls streamed in: take them from the intake (one message for
    /// every call queued there since the last; see `crate::intake`).
    Calls,
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
