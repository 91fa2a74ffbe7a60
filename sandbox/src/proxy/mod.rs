//! The host-side network proxy of the sandbox.
//!
//! A sandboxed command can reach nothing on the network but this proxy. It
//! speaks HTTP (`CONNECT host:port` tunnels, and plain `http://` requests
//! in absolute form) and SOCKS5 (`CONNECT` by name, IPv4 or IPv6), and
//! decides each connection in three steps:
//!
//! 1. the [`DomainRules`]: a denied pattern refuses, else an allowed
//!    pattern must match (Claude Code's `example.com` / `*.example.com`
//!    syntax; IP literals only if a pattern names them);
//! 2. one resolution through a [`Resolve`] (the system resolver by
//!    default);
//! 3. the address filter: if any resolved address is loopback, unspecified,
//!    link-local, multicast, broadcast or one of the host's own addresses,
//!    the connection is refused. The proxy then connects to one of the
//!    addresses it checked, never re-resolving the name.
//!
//! Each decision is reported as a [`ProxyEvent`] on an optional bounded
//! channel. Refusals answer HTTP 403 (502 when an allowed name does not
//! resolve or connect) or the matching SOCKS5 reply code.
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use baton_sandbox::proxy::{DomainRules, Proxy, SystemResolver};
//! let rules = DomainRules::new(["github.com", "*.githubusercontent.com"], ["gist.github.com"])
//!     .map_err(std::io::Error::other)?;
//! let proxy = Proxy::start(rules, SystemResolver)?;
//! println!("HTTPS_PROXY=http://{}  ALL_PROXY=socks5h://{}", proxy.http_addr(), proxy.socks_addr());
//! # Ok(()) }
//! ```

mod address;
mod event;
mod gate;
mod host;
mod http;
mod http_head;
mod resolve;
mod rules;
mod server;
mod socks;

pub use address::{classify_range, host_interface_addresses, LocalKind};
pub use event::{Protocol, ProxyEvent, Reason};
pub use host::{Host, HostError};
pub use resolve::{Resolve, ResolveFuture, StaticResolver, SystemResolver};
pub use rules::{DomainPattern, DomainRules, PatternError, RuleVerdict};
pub use server::{Proxy, ProxyBuilder};
