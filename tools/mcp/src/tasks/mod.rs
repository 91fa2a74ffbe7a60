//! MCP tasks on the client side: a `tools/call` that the server runs as a
//! task is followed to its end instead of waiting on one open request.
//!
//! When a task is used:
//! - protocol 2025-11-25: Baton asks for one when the server declared
//!   `capabilities.tasks.requests.tools.call` and the tool's
//!   `execution.taskSupport` is `optional` or `required` (see
//!   [`crate::task_facts`]); otherwise the call goes out as before;
//! - the SEP-2663 extension (2026-07-28): Baton declares the extension and
//!   the server decides, answering with a task handle when it wants one.
//!
//! Following a task ([`follow`]): `tasks/get` at the server's suggested
//! interval (held between a floor and a ceiling), each new status message
//! sent on as the call's progress; the result from `tasks/result`
//! (2025-11-25) or inline (SEP-2663). A request that fails on a broken
//! connection is asked again, on the restarted connection when the old one
//! closed, with the same task id: the call itself is never sent twice. On
//! interrupt, and when the call's total limit runs out, Baton sends
//! `tasks/cancel`. Every request has the call's idle limit; the whole task
//! has its total limit.

mod follow;
mod wire;

pub(crate) use follow::{follow, Following};

/// How much longer than the call's total limit a task is asked to be kept.
pub(crate) const TTL_MARGIN: std::time::Duration = std::time::Duration::from_secs(60);
pub(crate) use wire::{augmented_call, created};
