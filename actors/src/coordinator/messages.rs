//! What a coordinator is told.

use std::sync::Arc;

use baton_engine::ToolUse;

use crate::config::InterruptKind;

#[derive(Debug)]
pub enum CoordMsg {
    /// A call streamed in, with its id as noted in the intake.
    Add(ToolUse, Arc<str>),
    /// The message ended: no more calls will come.
    End,
    Interrupt(InterruptKind),
    /// The host dropped its handle before ending the batch: stop everything
    /// and finish, so nothing is left running for nobody.
    HostGone,
}
