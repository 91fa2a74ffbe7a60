//! Allowed and denied domain patterns, with Claude Code's syntax.
//!
//! - `example.com` matches that name only;
//! - `*.example.com` matches every name below it (`a.example.com`,
//!   `a.b.example.com`) but not `example.com` itself;
//! - an IP literal (`192.0.2.7`, `2001:db8::7`) matches that address only.
//!   IP targets are never matched by name patterns, so a client cannot
//!   reach an address unless a pattern names it.
//!
//! Matching ignores case and one trailing dot. A denied pattern beats an
//! allowed one, and an empty allow list allows nothing.

use std::fmt;
use std::net::IpAddr;

use super::host::{Host, HostError};

/// One domain pattern of a settings list.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum DomainPattern {
    /// `example.com`: this name only (lower case, no trailing dot).
    Exact(String),
    /// `*.example.com`: strict subdomains of the stored name.
    Subdomains(String),
    /// An IP literal: this address only.
    Ip(IpAddr),
}

/// A pattern that cannot be read; names the pattern and the problem.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid domain pattern {pattern:?}: {problem}")]
pub struct PatternError {
    /// The pattern as given.
    pub pattern: String,
    /// What is wrong with it.
    pub problem: String,
}

impl DomainPattern {
    /// Reads one pattern. Surrounding white space is ignored. Refused, as
    /// Claude Code refuses them: schemes, paths and ports (`https://a.com`,
    /// `a.com/x`, `a.com:443`), a bare `*`, a `*` anywhere but a leading
    /// `*.`, and wildcards over a top-level domain alone (`*.com`).
    pub fn parse(raw: &str) -> Result<DomainPattern, PatternError> {
        let text = raw.trim();
        let fail = |problem: &str| PatternError {
            pattern: raw.to_string(),
            problem: problem.to_string(),
        };
        if let Some(suffix) = text.strip_prefix("*.") {
            return match Host::parse(suffix) {
                Ok(Host::Name(name)) if name.contains('.') => Ok(DomainPattern::Subdomains(name)),
                Ok(Host::Name(_)) => Err(fail(
                    "a wildcard needs at least two labels after `*.` (`*.example.com`)",
                )),
                Ok(Host::Ip(_)) => Err(fail("a wildcard cannot cover an IP address")),
                Err(e) => Err(fail(&describe(&e, suffix))),
            };
        }
        if text.contains('*') {
            return Err(fail("`*` is only allowed as a leading `*.`"));
        }
        match Host::parse(text) {
            Ok(Host::Name(name)) => Ok(DomainPattern::Exact(name)),
            Ok(Host::Ip(ip)) => Ok(DomainPattern::Ip(ip)),
            Err(e) => Err(fail(&describe(&e, text))),
        }
    }

    /// Whether this pattern covers `host`.
    pub fn matches(&self, host: &Host) -> bool {
        match (self, host) {
            (DomainPattern::Exact(p), Host::Name(n)) => p == n,
            (DomainPattern::Subdomains(p), Host::Name(n)) => {
                // A strict subdomain ends with ".<pattern>" and has at least
                // one more label, so the apex itself never matches.
                n.len() > p.len() + 1
                    && n.ends_with(p.as_str())
                    && n.as_bytes()[n.len() - p.len() - 1] == b'.'
            }
            (DomainPattern::Ip(p), Host::Ip(ip)) => p == ip,
            _ => false,
        }
    }
}

/// Explains a host error in pattern terms; URL-like input gets a hint.
fn describe(err: &HostError, text: &str) -> String {
    if text.contains("://") || text.contains('/') || text.contains(':') {
        return "a pattern is a domain name only, without scheme, port or path".to_string();
    }
    err.to_string()
}

impl fmt::Display for DomainPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DomainPattern::Exact(name) => f.write_str(name),
            DomainPattern::Subdomains(name) => write!(f, "*.{name}"),
            DomainPattern::Ip(ip) => write!(f, "{ip}"),
        }
    }
}

/// What the domain rules say about one host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleVerdict {
    /// An allow pattern matches and no deny pattern does.
    Allowed(DomainPattern),
    /// A deny pattern matches (whatever the allow list says).
    Denied(DomainPattern),
    /// No allow pattern matches.
    NotAllowed,
}

/// The allowed and denied domain lists of a sandbox.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DomainRules {
    allowed: Vec<DomainPattern>,
    denied: Vec<DomainPattern>,
}

impl DomainRules {
    /// Reads both lists; the first unreadable pattern is the error.
    pub fn new<A, D>(allowed: A, denied: D) -> Result<DomainRules, PatternError>
    where
        A: IntoIterator,
        A::Item: AsRef<str>,
        D: IntoIterator,
        D::Item: AsRef<str>,
    {
        let read = |list: Vec<String>| {
            list.iter()
                .map(|p| DomainPattern::parse(p))
                .collect::<Result<Vec<_>, _>>()
        };
        Ok(DomainRules {
            allowed: read(
                allowed
                    .into_iter()
                    .map(|p| p.as_ref().to_string())
                    .collect(),
            )?,
            denied: read(denied.into_iter().map(|p| p.as_ref().to_string()).collect())?,
        })
    }

    /// Rules from patterns already read.
    pub fn from_patterns(allowed: Vec<DomainPattern>, denied: Vec<DomainPattern>) -> DomainRules {
        DomainRules { allowed, denied }
    }

    /// Rules that allow nothing.
    pub fn deny_all() -> DomainRules {
        DomainRules::default()
    }

    /// The allow list.
    pub fn allowed(&self) -> &[DomainPattern] {
        &self.allowed
    }

    /// The deny list.
    pub fn denied(&self) -> &[DomainPattern] {
        &self.denied
    }

    /// Decides one host: deny first, then allow, else not allowed.
    pub fn check(&self, host: &Host) -> RuleVerdict {
        if let Some(p) = self.denied.iter().find(|p| p.matches(host)) {
            return RuleVerdict::Denied(p.clone());
        }
        match self.allowed.iter().find(|p| p.matches(host)) {
            Some(p) => RuleVerdict::Allowed(p.clone()),
            None => RuleVerdict::NotAllowed,
        }
    }

    /// Convenience: parses `host` and says whether it is allowed. A host
    /// that cannot be parsed is not allowed.
    pub fn is_allowed(&self, host: &str) -> bool {
        Host::parse(host).is_ok_and(|h| matches!(self.check(&h), RuleVerdict::Allowed(_)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(allow: &[&str], deny: &[&str]) -> DomainRules {
        DomainRules::new(allow, deny).unwrap()
    }

    #[test]
    fn exact_and_wildcard() {
        let r = rules(&["example.com", "*.docs.rs"], &[]);
        assert!(r.is_allowed("example.com"));
        assert!(r.is_allowed("EXAMPLE.com."));
        assert!(!r.is_allowed("www.example.com"));
        assert!(r.is_allowed("serde.docs.rs"));
        assert!(r.is_allowed("a.b.docs.rs"));
        assert!(!r.is_allowed("docs.rs"));
        assert!(!r.is_allowed("evildocs.rs"));
        assert!(!r.is_allowed("docs.rs.evil.com"));
    }

    #[test]
    fn deny_wins_and_empty_allows_nothing() {
        let r = rules(&["*.example.com"], &["secret.example.com"]);
        assert!(r.is_allowed("a.example.com"));
        assert!(!r.is_allowed("secret.example.com"));
        assert!(r.is_allowed("a.secret.example.com"));
        let r = rules(&["*.example.com"], &["*.example.com"]);
        assert!(!r.is_allowed("a.example.com"));
        assert!(!DomainRules::deny_all().is_allowed("example.com"));
    }

    #[test]
    fn ip_literals_need_their_own_pattern() {
        let r = rules(&["*.example.com", "192.0.2.7", "[2001:db8::7]"], &[]);
        assert!(r.is_allowed("192.0.2.7"));
        assert!(!r.is_allowed("192.0.2.8"));
        assert!(r.is_allowed("2001:db8::7"));
        assert!(r.is_allowed("[2001:DB8:0::7]"));
        assert!(!rules(&["example.com"], &[]).is_allowed("93.184.215.14"));
    }

    #[test]
    fn bad_patterns_are_errors() {
        for bad in [
            "*",
            "*.",
            "*.com",
            "a.*.com",
            "https://a.com",
            "a.com/x",
            "a.com:443",
            "",
            "a..com",
            "*.1.2.3.4",
        ] {
            assert!(
                DomainPattern::parse(bad).is_err(),
                "{bad:?} should be refused"
            );
        }
        assert_eq!(
            DomainPattern::parse(" A.com. "),
            Ok(DomainPattern::Exact("a.com".into()))
        );
        let err = DomainRules::new(["ok.com"], ["*"]).unwrap_err();
        assert_eq!(err.pattern, "*");
    }
}
