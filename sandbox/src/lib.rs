//! Kernel confinement for the commands an agent runs.
//!
//! Reading a command's text can never be a complete defence: a model that
//! wants out will find a construct the classifier misjudges. This crate puts
//! the kernel underneath, so that a misjudged command still cannot write,
//! cannot reach the network and cannot read what it was not given:
//!
//! - [`Policy`] says what a command may do: trees it may read, trees it may
//!   write, paths carved out of them, and its network;
//! - [`Prepared`] is a policy turned into kernel objects *in the parent*
//!   (a Landlock ruleset and seccomp programs), because the child of a
//!   `clone(CLONE_VM | CLONE_VFORK)` may only make raw system calls;
//! - [`Prepared::entry`] and [`enter`] are the child's half: raw system
//!   calls only, no allocation;
//! - [`support`] probes once what this kernel offers, so that a host can
//!   fail closed (and say so) where confinement is impossible.
//!
//! Landlock gives the file-system and TCP rules and scopes signals,
//! abstract Unix sockets and `ptrace` access (another process's
//! environment, memory, descriptors) to the command's own processes;
//! seccomp allows only the sockets the policy names (TCP streams at most,
//! without Fast Open, which would connect past Landlock), and refuses
//! `io_uring` (which would bypass both) and the calls that change
//! namespaces or mounts; the command holds no capability (a root host's
//! would override Landlock's `ptrace` scoping and open raw sockets).

mod caps;
mod landlock_rules;
mod mounts;
mod netns;
mod policy;
mod prepared;
pub mod proxy;
mod seccomp;
mod sockets;
mod support;

pub use policy::{Network, Pinned, Policy};
pub use prepared::{enter, EnterError, Entry, PrepareError, Prepared};
pub use support::{support, Support, PRETEND_UNAVAILABLE_VAR};
