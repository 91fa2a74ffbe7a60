//! The address filter: which resolved addresses the proxy never connects to.
//!
//! An allowed name can resolve to anything its DNS owner chooses, including
//! `127.0.0.1`. Connecting there would hand the sandboxed command the host's
//! own services (a local database, a cloud metadata endpoint, Baton itself),
//! which is exactly what the sandbox keeps it from. So after resolution,
//! addresses on loopback, link-local, multicast and broadcast ranges, the
//! unspecified address, and the host's own interface addresses are refused.
//! Private ranges (10/8, 172.16/12, 192.168/16, fc00::/7) stay reachable:
//! intranet hosts are a normal target of an allowed name.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::OnceLock;

/// Why an address counts as local to the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LocalKind {
    /// 127.0.0.0/8 or ::1.
    Loopback,
    /// 0.0.0.0/8 or ::; connecting to them reaches the host itself.
    Unspecified,
    /// 169.254.0.0/16 or fe80::/10 (cloud metadata lives here).
    LinkLocal,
    /// 224.0.0.0/4 or ff00::/8.
    Multicast,
    /// 255.255.255.255.
    Broadcast,
    /// An IPv4-compatible IPv6 address (::a.b.c.d, deprecated): it only
    /// ever serves to disguise an IPv4 address.
    Ipv4Compatible,
    /// One of the host's own interface addresses.
    HostInterface,
}

impl fmt::Display for LocalKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LocalKind::Loopback => "a loopback address",
            LocalKind::Unspecified => "the unspecified address",
            LocalKind::LinkLocal => "a link-local address",
            LocalKind::Multicast => "a multicast address",
            LocalKind::Broadcast => "the broadcast address",
            LocalKind::Ipv4Compatible => "an IPv4-compatible IPv6 address",
            LocalKind::HostInterface => "an address of this host",
        })
    }
}

/// Classifies an address by its range alone (no interface lookup).
/// IPv4-mapped IPv6 addresses (`::ffff:127.0.0.1`) are judged as the IPv4
/// address they carry, since the kernel connects to that.
pub fn classify_range(ip: IpAddr) -> Option<LocalKind> {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => classify_v4(v4),
            None => classify_v6(v6),
        },
    }
}

fn classify_v4(ip: Ipv4Addr) -> Option<LocalKind> {
    if ip.is_loopback() {
        Some(LocalKind::Loopback)
    } else if ip.octets()[0] == 0 {
        Some(LocalKind::Unspecified)
    } else if ip.is_link_local() {
        Some(LocalKind::LinkLocal)
    } else if ip.is_multicast() {
        Some(LocalKind::Multicast)
    } else if ip.is_broadcast() {
        Some(LocalKind::Broadcast)
    } else {
        None
    }
}

fn classify_v6(ip: Ipv6Addr) -> Option<LocalKind> {
    let segments = ip.segments();
    if ip.is_loopback() {
        Some(LocalKind::Loopback)
    } else if ip.is_unspecified() {
        Some(LocalKind::Unspecified)
    } else if segments[0] & 0xffc0 == 0xfe80 {
        Some(LocalKind::LinkLocal)
    } else if ip.is_multicast() {
        Some(LocalKind::Multicast)
    } else if segments[..6].iter().all(|s| *s == 0) {
        Some(LocalKind::Ipv4Compatible)
    } else {
        None
    }
}

/// The host's own interface addresses, read once with getifaddrs(3).
/// An error means they could not be read; the filter then refuses every
/// address, since it cannot tell which are local.
pub fn host_interface_addresses() -> Result<&'static [IpAddr], &'static str> {
    static CACHE: OnceLock<Result<Vec<IpAddr>, String>> = OnceLock::new();
    CACHE
        .get_or_init(read_interface_addresses)
        .as_ref()
        .map(Vec::as_slice)
        .map_err(String::as_str)
}

fn read_interface_addresses() -> Result<Vec<IpAddr>, String> {
    let list = nix::ifaddrs::getifaddrs().map_err(|e| format!("getifaddrs failed: {e}"))?;
    let mut out = Vec::new();
    for entry in list {
        let Some(addr) = entry.address else { continue };
        if let Some(v4) = addr.as_sockaddr_in() {
            out.push(IpAddr::V4(v4.ip()));
        } else if let Some(v6) = addr.as_sockaddr_in6() {
            out.push(IpAddr::V6(v6.ip()));
        }
    }
    Ok(out)
}

/// The filter the proxy applies to each resolved address.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct AddressFilter {
    /// Test knob: loopback targets pass (see
    /// `ProxyBuilder::allow_loopback_targets_for_tests`).
    pub(crate) allow_loopback: bool,
}

/// Why the filter refused an address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AddressRefusal {
    Local(LocalKind),
    /// The interface list could not be read (fail closed).
    Unknown(&'static str),
}

impl AddressFilter {
    /// `Ok` if the proxy may connect to `ip`.
    pub(crate) fn check(&self, ip: IpAddr) -> Result<(), AddressRefusal> {
        let kind = classify_range(ip);
        if self.allow_loopback && kind == Some(LocalKind::Loopback) {
            return Ok(());
        }
        if let Some(kind) = kind {
            return Err(AddressRefusal::Local(kind));
        }
        let own = host_interface_addresses().map_err(AddressRefusal::Unknown)?;
        let plain = unmap(ip);
        if own.iter().any(|a| unmap(*a) == plain) {
            return Err(AddressRefusal::Local(LocalKind::HostInterface));
        }
        Ok(())
    }
}

/// The IPv4 address inside an IPv4-mapped IPv6 address, else the address.
fn unmap(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(s: &str) -> Option<LocalKind> {
        classify_range(s.parse().unwrap())
    }

    #[test]
    fn local_ranges() {
        assert_eq!(kind("127.0.0.1"), Some(LocalKind::Loopback));
        assert_eq!(kind("127.255.3.4"), Some(LocalKind::Loopback));
        assert_eq!(kind("::1"), Some(LocalKind::Loopback));
        assert_eq!(kind("::ffff:127.0.0.1"), Some(LocalKind::Loopback));
        assert_eq!(kind("0.0.0.0"), Some(LocalKind::Unspecified));
        assert_eq!(kind("0.1.2.3"), Some(LocalKind::Unspecified));
        assert_eq!(kind("::"), Some(LocalKind::Unspecified));
        assert_eq!(kind("169.254.169.254"), Some(LocalKind::LinkLocal));
        assert_eq!(kind("::ffff:169.254.169.254"), Some(LocalKind::LinkLocal));
        assert_eq!(kind("fe80::1"), Some(LocalKind::LinkLocal));
        assert_eq!(kind("febf::1"), Some(LocalKind::LinkLocal));
        assert_eq!(kind("224.0.0.1"), Some(LocalKind::Multicast));
        assert_eq!(kind("ff02::1"), Some(LocalKind::Multicast));
        assert_eq!(kind("255.255.255.255"), Some(LocalKind::Broadcast));
        assert_eq!(kind("::127.0.0.1"), Some(LocalKind::Ipv4Compatible));
    }

    #[test]
    fn remote_ranges_pass() {
        for ok in [
            "10.0.0.1",
            "172.16.5.4",
            "192.168.1.1",
            "93.184.215.14",
            "fd00::1",
            "2001:db8::1",
            "fec0::1",
        ] {
            assert_eq!(kind(ok), None, "{ok}");
        }
    }

    #[test]
    fn filter_refuses_own_interfaces_and_honours_the_test_knob() {
        let strict = AddressFilter::default();
        let lenient = AddressFilter {
            allow_loopback: true,
        };
        let lo: IpAddr = "127.0.0.1".parse().unwrap();
        assert_eq!(
            strict.check(lo),
            Err(AddressRefusal::Local(LocalKind::Loopback))
        );
        assert_eq!(lenient.check(lo), Ok(()));
        assert!(lenient.check("169.254.1.1".parse().unwrap()).is_err());
        for own in host_interface_addresses().unwrap() {
            assert!(strict.check(*own).is_err(), "{own} is this host's");
            if classify_range(*own).is_none() {
                assert_eq!(
                    lenient.check(*own),
                    Err(AddressRefusal::Local(LocalKind::HostInterface))
                );
            }
        }
    }
}
