//! The batch coordinator (SPEC §5–§8): one actor per message.
//!
//! - [`scheduler`]: which queued call may start now (plain logic, tested alone);
//! - [`state`]: the batch as the coordinator owns it, call by call;
//! - [`control`]: interrupts, sibling cancellation, context modifiers;
//! - [`over_limit`], [`answered`]: calls settled on arrival (past the call
//!   limit; answered by the host);
//! - [`actor`]: the ractor plumbing around the state;
//! - [`messages`]: what the host tells a coordinator.

mod actor;
mod answered;
mod batch_hooks;
mod cancel_one;
mod control;
pub(crate) mod messages;
mod over_limit;
pub(crate) mod scheduler;
pub(crate) mod state;

pub(crate) use actor::Coordinator;
pub(crate) use cancel_one::host_cancelled;
pub(crate) use messages::CoordMsg;
