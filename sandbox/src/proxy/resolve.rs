//! Name resolution, behind a trait so tests and hosts can supply their own.
//!
//! The proxy resolves each allowed name once, checks every address it got,
//! and connects to one of those same addresses. It never hands the name to
//! a second resolution (as `TcpStream::connect("name:port")` would), so a
//! name whose DNS answer changes between check and connect (DNS
//! rebinding) cannot slip a local address past the filter.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;

/// The future a [`Resolve`] returns.
pub type ResolveFuture<'a> = Pin<Box<dyn Future<Output = io::Result<Vec<IpAddr>>> + Send + 'a>>;

/// Turns a DNS name into addresses. `name` is already normalized (lower
/// case, no trailing dot) and is never an IP literal.
pub trait Resolve: Send + Sync + 'static {
    /// All addresses of `name`; an empty list counts as unresolvable.
    fn resolve<'a>(&'a self, name: &'a str) -> ResolveFuture<'a>;
}

/// The system resolver (getaddrinfo through `tokio::net::lookup_host`).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemResolver;

impl Resolve for SystemResolver {
    fn resolve<'a>(&'a self, name: &'a str) -> ResolveFuture<'a> {
        Box::pin(async move {
            let addrs = tokio::net::lookup_host((name, 0)).await?;
            let mut ips: Vec<IpAddr> = Vec::new();
            for addr in addrs {
                if !ips.contains(&addr.ip()) {
                    ips.push(addr.ip());
                }
            }
            Ok(ips)
        })
    }
}

/// A fixed table of names, for tests and for hosts that pin names.
/// Unknown names fail with [`io::ErrorKind::NotFound`].
#[derive(Debug, Clone, Default)]
pub struct StaticResolver {
    table: HashMap<String, Vec<IpAddr>>,
}

impl StaticResolver {
    /// An empty table.
    pub fn new() -> StaticResolver {
        StaticResolver::default()
    }

    /// Adds `name` (matched without regard to case or a trailing dot).
    pub fn with(mut self, name: &str, ips: impl IntoIterator<Item = IpAddr>) -> StaticResolver {
        self.table
            .insert(normalize(name), ips.into_iter().collect());
        self
    }
}

fn normalize(name: &str) -> String {
    name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase()
}

impl Resolve for StaticResolver {
    fn resolve<'a>(&'a self, name: &'a str) -> ResolveFuture<'a> {
        let found = self.table.get(&normalize(name)).cloned();
        Box::pin(async move {
            found.ok_or_else(|| {
                io::Error::new(io::ErrorKind::NotFound, format!("no address for {name}"))
            })
        })
    }
}
