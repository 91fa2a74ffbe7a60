//! Target hosts as clients name them, parsed into one normalized form.
//!
//! Every place that receives a host from a sandboxed client (an HTTP
//! authority, a SOCKS5 domain or address) goes through [`Host::parse`], so
//! the rules see one spelling per name: lower case, no trailing dot, and IP
//! literals recognised as addresses rather than names.

use std::fmt;
use std::net::{IpAddr, Ipv6Addr};

/// The longest name DNS can carry (RFC 1035), without the trailing dot.
const MAX_NAME_LEN: usize = 253;
/// The longest single label DNS can carry.
const MAX_LABEL_LEN: usize = 63;

/// A connection target: a DNS name or an IP literal.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Host {
    /// A DNS name, lower case, without a trailing dot.
    Name(String),
    /// An IP literal (`192.0.2.1`, `2001:db8::1` or `[2001:db8::1]`).
    Ip(IpAddr),
}

/// Why a host could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HostError {
    /// The host is empty (or only a dot).
    #[error("empty host name")]
    Empty,
    /// The name is longer than DNS allows.
    #[error("host name longer than {MAX_NAME_LEN} characters")]
    TooLong,
    /// A label is empty (`a..b`) or longer than 63 characters.
    #[error("host name has an empty or over-long label")]
    BadLabel,
    /// A character that no DNS name carries (non-ASCII, `%`, `@`, `:`, …).
    #[error("host name contains a character not allowed in a DNS name")]
    BadCharacter,
    /// The last label is numeric (`127.1`, `2130706433`, `0x7f.1`). The C
    /// resolver reads such names as IPv4 addresses in shorthand, octal or
    /// hex; refusing them keeps an address from passing as a name.
    #[error("host name looks like an IPv4 address in a non-standard form")]
    NumericName,
}

impl Host {
    /// Parses a host as a client sends it: a name, a dotted IPv4 address, or
    /// an IPv6 address with or without brackets. Names are lower-cased and
    /// one trailing dot is removed.
    pub fn parse(raw: &str) -> Result<Host, HostError> {
        if let Some(inner) = raw.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            // Brackets only ever hold an IPv6 literal; zone ids (`%eth0`)
            // fail here on purpose, since they name a local interface.
            return inner
                .parse::<Ipv6Addr>()
                .map(|ip| Host::Ip(IpAddr::V6(ip)))
                .map_err(|_| HostError::BadCharacter);
        }
        let trimmed = raw.strip_suffix('.').unwrap_or(raw);
        if let Ok(ip) = trimmed.parse::<IpAddr>() {
            return Ok(Host::Ip(ip));
        }
        parse_name(trimmed).map(Host::Name)
    }

    /// The name, if this host is one.
    pub fn name(&self) -> Option<&str> {
        match self {
            Host::Name(name) => Some(name),
            Host::Ip(_) => None,
        }
    }
}

impl fmt::Display for Host {
    /// Names as they are; IP literals without brackets.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Host::Name(name) => f.write_str(name),
            Host::Ip(ip) => write!(f, "{ip}"),
        }
    }
}

/// Checks and lower-cases a DNS name (trailing dot already removed).
fn parse_name(name: &str) -> Result<String, HostError> {
    if name.is_empty() {
        return Err(HostError::Empty);
    }
    if name.len() > MAX_NAME_LEN {
        return Err(HostError::TooLong);
    }
    let lower = name.to_ascii_lowercase();
    for label in lower.split('.') {
        if label.is_empty() || label.len() > MAX_LABEL_LEN {
            return Err(HostError::BadLabel);
        }
        // Underscores appear in real host names (service records), so they
        // pass; anything else outside letters, digits and `-` cannot be a
        // name and may confuse a resolver or a log reader.
        if !label
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
        {
            return Err(HostError::BadCharacter);
        }
    }
    let last = lower.rsplit('.').next().unwrap_or_default();
    if is_numeric_label(last) {
        return Err(HostError::NumericName);
    }
    Ok(lower)
}

/// True for labels that inet_aton would read as a number: decimal or octal
/// digits, or `0x` followed by hex digits.
fn is_numeric_label(label: &str) -> bool {
    if let Some(hex) = label.strip_prefix("0x") {
        return hex.bytes().all(|b| b.is_ascii_hexdigit());
    }
    !label.is_empty() && label.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_normalized() {
        assert_eq!(
            Host::parse("Example.COM."),
            Ok(Host::Name("example.com".into()))
        );
        assert_eq!(
            Host::parse("a_b-c.test"),
            Ok(Host::Name("a_b-c.test".into()))
        );
    }

    #[test]
    fn ip_literals_are_addresses() {
        assert_eq!(
            Host::parse("192.0.2.1"),
            Ok(Host::Ip("192.0.2.1".parse().unwrap()))
        );
        assert_eq!(Host::parse("[::1]"), Ok(Host::Ip("::1".parse().unwrap())));
        assert_eq!(Host::parse("::1"), Ok(Host::Ip("::1".parse().unwrap())));
        assert_eq!(
            Host::parse("127.0.0.1."),
            Ok(Host::Ip("127.0.0.1".parse().unwrap()))
        );
    }

    #[test]
    fn odd_forms_are_refused() {
        for bad in [
            "127.1",
            "2130706433",
            "0x7f.0.0.1",
            "1.0x7f",
            "0x7f000001",
            "017700000001",
        ] {
            assert_eq!(Host::parse(bad), Err(HostError::NumericName), "{bad}");
        }
        for bad in [
            "a b.test",
            "ex%41.com",
            "user@host",
            "host:80",
            "[fe80::1%eth0]",
            "é.test",
        ] {
            assert_eq!(Host::parse(bad), Err(HostError::BadCharacter), "{bad}");
        }
        assert_eq!(Host::parse(""), Err(HostError::Empty));
        assert_eq!(Host::parse("."), Err(HostError::Empty));
        assert_eq!(Host::parse("a..b"), Err(HostError::BadLabel));
        assert_eq!(Host::parse("a.test.."), Err(HostError::BadLabel));
        assert_eq!(Host::parse(&"a".repeat(64)), Err(HostError::BadLabel));
        let long = vec!["a"; 130].join(".");
        assert_eq!(Host::parse(&long), Err(HostError::TooLong));
    }
}
