//! What the proxy reports about each connection it decides.
//!
//! Events go into a bounded channel the host supplies. The proxy never waits
//! on it: when the receiver lags and the channel is full, the event is
//! dropped and counted, so a slow host cannot stall sandboxed traffic.

use std::fmt;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::mpsc;

use super::address::LocalKind;

/// The protocol a client used to ask for a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Protocol {
    /// HTTP `CONNECT host:port` (a tunnel, usually TLS).
    HttpConnect,
    /// A plain HTTP request in absolute form (`GET http://host/…`).
    HttpForward,
    /// SOCKS5 `CONNECT`.
    Socks5,
}

/// Why a connection was allowed or refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reason {
    /// An allow pattern matched (shown as written, e.g. `*.example.com`).
    Allowed {
        /// The matching allow pattern.
        pattern: String,
    },
    /// No allow pattern matches the host.
    NotAllowed,
    /// A deny pattern matches the host.
    Denied {
        /// The matching deny pattern.
        pattern: String,
    },
    /// The host is allowed but resolves to an address local to this host.
    LocalAddress {
        /// The refused address.
        address: IpAddr,
        /// Which kind of local address it is.
        kind: LocalKind,
    },
    /// The host's own addresses could not be read, so no address can be
    /// judged; every connection is refused.
    AddressCheckUnavailable(String),
    /// The host is allowed but did not resolve.
    Unresolvable(String),
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::Allowed { pattern } => write!(f, "allowed by {pattern}"),
            Reason::NotAllowed => f.write_str("not in the allowed domains"),
            Reason::Denied { pattern } => write!(f, "denied by {pattern}"),
            Reason::LocalAddress { address, kind } => {
                write!(f, "resolves to a local address ({address} is {kind})")
            }
            Reason::AddressCheckUnavailable(why) => write!(f, "cannot check addresses: {why}"),
            Reason::Unresolvable(why) => write!(f, "does not resolve: {why}"),
        }
    }
}

/// One decision of the proxy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyEvent {
    /// The requested host: a name (lower case) or an IP literal.
    pub domain: String,
    /// The requested port.
    pub port: u16,
    /// Whether the proxy went on to connect.
    pub allowed: bool,
    /// Why.
    pub reason: Reason,
    /// How the client asked.
    pub protocol: Protocol,
}

/// The proxy's side of the event channel.
#[derive(Debug, Default)]
pub(crate) struct EventSink {
    sender: Option<mpsc::Sender<ProxyEvent>>,
    dropped: AtomicU64,
}

impl EventSink {
    pub(crate) fn new(sender: Option<mpsc::Sender<ProxyEvent>>) -> EventSink {
        EventSink {
            sender,
            dropped: AtomicU64::new(0),
        }
    }

    /// Logs the event and offers it to the channel without waiting.
    pub(crate) fn emit(&self, event: ProxyEvent) {
        if event.allowed {
            tracing::debug!(domain = %event.domain, port = event.port, reason = %event.reason, "proxy allowed");
        } else {
            tracing::info!(domain = %event.domain, port = event.port, reason = %event.reason, "proxy refused");
        }
        let Some(sender) = &self.sender else { return };
        if sender.try_send(event).is_err() {
            // Full or closed: either way the host is not reading; count it.
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub(crate) fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}
