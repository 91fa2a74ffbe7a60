//! Baton's actor runtime (on ractor).
//!
//! One **coordinator** actor per assistant message owns its batch: it decides
//! when each call starts (SPEC §5), applies context changes (§6), stops calls
//! on interrupts (§7) and on a failed sibling (§8), and sends results in call
//! order through its ordering stage (§1, §9). One **invocation** per call, a
//! lightweight task under its coordinator, runs the engine's per-call
//! pipeline and ends with its call; it reports its end to the coordinator
//! exactly once, so a call that panics or is aborted still reaches the
//! coordinator, which then writes its result. Cancellation flows
//! down a tree of scopes (turn → batch → call → nested batch, §15).
//!
//! Hosts use a [`Runtime`] to open batches and a [`BatchHandle`] to feed and
//! interrupt them; events arrive on the [`EventSink`] they supplied.
//!
//! The modules are private: the `pub use` list below is the whole API, so
//! the coordinator's messages and state stay free to change.

mod approver;
mod config;
mod coordinator;
mod event;
mod handle;
mod intake;
mod invocation;
mod lifecycle;
mod limits;
mod nesting;
mod ordering;
mod quiescence;
mod runtime;
#[cfg(any(test, feature = "testkit"))]
pub mod testkit;
mod trace;

pub use config::{InterruptKind, RuntimeConfig, SiblingPolicy};
pub use event::{BatchSummary, Event, EventSink, PermissionPrompt};
pub use handle::{BatchError, BatchHandle};
pub use invocation::InjectedFault;
pub use lifecycle::{CallEvent, CallState};
pub use limits::Limits;
pub use runtime::{FaultHook, Runtime, RuntimeBuilder};
