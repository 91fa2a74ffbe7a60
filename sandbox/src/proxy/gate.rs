//! The one place that decides and opens an outgoing connection.
//!
//! Both protocols hand a parsed host and port to [`Gate::open`]; it applies
//! the domain rules, resolves the name once, runs every resolved address
//! through the address filter, reports the decision, and connects to a
//! checked address. Keeping the whole sequence here means the HTTP and
//! SOCKS5 front ends cannot disagree on policy.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use tokio::net::TcpStream;

use super::address::{AddressFilter, AddressRefusal};
use super::event::{EventSink, Protocol, ProxyEvent, Reason};
use super::host::Host;
use super::resolve::Resolve;
use super::rules::{DomainRules, RuleVerdict};

/// Why no connection was made.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// The policy refuses the target (HTTP 403, SOCKS reply 0x02).
    Policy(Reason),
    /// The name is allowed but has no address (HTTP 502, SOCKS 0x04).
    Unresolvable(Reason),
    /// Every checked address failed to connect (HTTP 502, SOCKS by kind).
    Connect(io::Error),
}

/// Shared policy and limits of one proxy.
pub(crate) struct Gate {
    pub(crate) rules: RwLock<Arc<DomainRules>>,
    pub(crate) resolver: Arc<dyn Resolve>,
    pub(crate) filter: AddressFilter,
    pub(crate) events: EventSink,
    pub(crate) resolve_timeout: Duration,
    pub(crate) connect_timeout: Duration,
}

impl Gate {
    /// The current rules (a cheap clone of an `Arc`).
    pub(crate) fn rules(&self) -> Arc<DomainRules> {
        // A poisoned lock only means a writer panicked between two whole
        // assignments; the stored value is still a complete rule set.
        match self.rules.read() {
            Ok(guard) => guard.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    pub(crate) fn set_rules(&self, rules: DomainRules) {
        let mut guard = match self.rules.write() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        *guard = Arc::new(rules);
    }

    /// Decides `host:port` and, if allowed, connects to a checked address.
    pub(crate) async fn open(
        &self,
        host: &Host,
        port: u16,
        protocol: Protocol,
    ) -> Result<TcpStream, Refusal> {
        let report = |allowed: bool, reason: Reason| {
            self.events.emit(ProxyEvent {
                domain: host.to_string(),
                port,
                allowed,
                reason,
                protocol,
            })
        };
        let pattern = match self.rules().check(host) {
            RuleVerdict::Allowed(p) => p.to_string(),
            RuleVerdict::Denied(p) => {
                let reason = Reason::Denied {
                    pattern: p.to_string(),
                };
                report(false, reason.clone());
                return Err(Refusal::Policy(reason));
            }
            RuleVerdict::NotAllowed => {
                report(false, Reason::NotAllowed);
                return Err(Refusal::Policy(Reason::NotAllowed));
            }
        };
        let ips = match self.resolve(host).await {
            Ok(ips) => ips,
            Err(why) => {
                let reason = Reason::Unresolvable(why);
                report(false, reason.clone());
                return Err(Refusal::Unresolvable(reason));
            }
        };
        // Any local address refuses the whole name: a name that mixes
        // public and local answers is a rebinding attempt or a
        // misconfiguration, and neither should reach this host.
        for ip in &ips {
            let refused = match self.filter.check(*ip) {
                Ok(()) => continue,
                Err(AddressRefusal::Local(kind)) => Reason::LocalAddress { address: *ip, kind },
                Err(AddressRefusal::Unknown(why)) => {
                    Reason::AddressCheckUnavailable(why.to_string())
                }
            };
            report(false, refused.clone());
            return Err(Refusal::Policy(refused));
        }
        report(true, Reason::Allowed { pattern });
        self.connect(&ips, port).await.map_err(Refusal::Connect)
    }

    /// The addresses of `host`, each once, in the resolver's order.
    async fn resolve(&self, host: &Host) -> Result<Vec<IpAddr>, String> {
        let name = match host {
            Host::Ip(ip) => return Ok(vec![*ip]),
            Host::Name(name) => name,
        };
        match tokio::time::timeout(self.resolve_timeout, self.resolver.resolve(name)).await {
            Err(_) => Err(format!("no answer within {:?}", self.resolve_timeout)),
            Ok(Err(e)) => Err(e.to_string()),
            Ok(Ok(ips)) if ips.is_empty() => Err("no addresses".to_string()),
            Ok(Ok(ips)) => Ok(ips),
        }
    }

    /// Tries the checked addresses in order; the last error wins.
    async fn connect(&self, ips: &[IpAddr], port: u16) -> io::Result<TcpStream> {
        let mut last = io::Error::new(io::ErrorKind::NotFound, "no address to connect to");
        for ip in ips {
            let addr = SocketAddr::new(*ip, port);
            match tokio::time::timeout(self.connect_timeout, TcpStream::connect(addr)).await {
                Ok(Ok(stream)) => return Ok(stream),
                Ok(Err(e)) => last = e,
                Err(_) => {
                    last = io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!("connecting to {addr} timed out"),
                    )
                }
            }
        }
        Err(last)
    }
}
