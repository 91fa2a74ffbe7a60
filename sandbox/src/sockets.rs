//! Which sockets a confined command may create and how it may send: the
//! seccomp rules, by allow-list.
//!
//! Landlock's network rules see two calls only, `bind` and `connect` on TCP
//! sockets. Everything else that reaches the network is stopped here, by
//! naming what may exist rather than what may not (a deny-list missed
//! `SOCK_PACKET`, which sent raw frames on the host's loopback):
//! - with a restricted network ([`Network::ProxyPorts`],
//!   [`Network::Isolated`]) a socket may be an IPv4 or IPv6 stream with
//!   protocol 0 or TCP, or a Unix socket when the policy allows those;
//!   every other family, type and protocol is refused (UDP, raw and packet
//!   sockets, SCTP, MPTCP, netlink, `AF_PACKET`, …);
//! - with no network ([`Network::Denied`]) only Unix sockets, and only
//!   when the policy allows them;
//! - `socketpair` only makes Unix pairs (the one family it exists for);
//! - TCP Fast Open connects inside `sendto`/`sendmsg`/`sendmmsg`
//!   (`MSG_FASTOPEN`) or inside a later `write` (`TCP_FASTOPEN_CONNECT`),
//!   never calling `connect()`, so Landlock's port rules never see it: both
//!   are refused when the network is restricted.
//!
//! [`Network::Unrestricted`] refuses only Unix sockets the policy does not
//! allow.

use std::collections::BTreeMap;

use seccompiler::{SeccompCmpOp, SeccompRule};

use crate::policy::{Network, Policy};
use crate::prepared::PrepareError;
use crate::seccomp::{cond, rule};

/// The `type` argument values of an allowed stream: `SOCK_STREAM` with or
/// without `SOCK_NONBLOCK` and `SOCK_CLOEXEC` (any other bit makes the
/// kernel refuse the call with `EINVAL` anyway).
fn stream_types() -> [u64; 4] {
    let stream = libc::SOCK_STREAM as u64;
    let nonblock = libc::SOCK_NONBLOCK as u64;
    let cloexec = libc::SOCK_CLOEXEC as u64;
    [
        stream,
        stream | nonblock,
        stream | cloexec,
        stream | nonblock | cloexec,
    ]
}

/// Adds to `rules` (system call → rules, a call matching any rule is
/// refused) the socket rules of `policy`.
pub(crate) fn add_rules(
    policy: &Policy,
    rules: &mut BTreeMap<i64, Vec<SeccompRule>>,
) -> Result<(), PrepareError> {
    let restricted = !matches!(policy.network, Network::Unrestricted);
    let created = socket_rules(policy)?;
    if !created.is_empty() {
        rules.insert(libc::SYS_socket, created);
    }
    if !restricted {
        return Ok(());
    }
    rules.insert(
        libc::SYS_socketpair,
        vec![rule(vec![cond(
            0,
            SeccompCmpOp::Ne,
            libc::AF_UNIX as u64,
        )?])?],
    );
    let fast_open = libc::MSG_FASTOPEN as u64;
    // The `flags` argument: sendto(fd, buf, len, flags, …),
    // sendmsg(fd, msg, flags), sendmmsg(fd, vec, len, flags).
    for (call, flags) in [
        (libc::SYS_sendto, 3),
        (libc::SYS_sendmsg, 2),
        (libc::SYS_sendmmsg, 3),
    ] {
        rules.insert(
            call,
            vec![rule(vec![cond(
                flags,
                SeccompCmpOp::MaskedEq(fast_open),
                fast_open,
            )?])?],
        );
    }
    rules.insert(
        libc::SYS_setsockopt,
        vec![rule(vec![
            cond(1, SeccompCmpOp::Eq, libc::IPPROTO_TCP as u64)?,
            cond(2, SeccompCmpOp::Eq, libc::TCP_FASTOPEN_CONNECT as u64)?,
        ])?],
    );
    Ok(())
}

/// Rules matching the `socket()` calls the policy refuses.
fn socket_rules(policy: &Policy) -> Result<Vec<SeccompRule>, PrepareError> {
    let unix = libc::AF_UNIX as u64;
    let mut rules = Vec::new();
    match &policy.network {
        Network::Unrestricted => {
            if !policy.unix_sockets {
                rules.push(rule(vec![cond(0, SeccompCmpOp::Eq, unix)?])?);
            }
        }
        Network::ProxyPorts { .. } | Network::Isolated { .. } => {
            rules.push(other_families(policy)?);
            for family in [libc::AF_INET as u64, libc::AF_INET6 as u64] {
                // Not a stream: UDP, raw, packet, sequenced packets, …
                let mut not_stream = vec![cond(0, SeccompCmpOp::Eq, family)?];
                for kind in stream_types() {
                    not_stream.push(cond(1, SeccompCmpOp::Ne, kind)?);
                }
                rules.push(rule(not_stream)?);
                // A stream that is not TCP (SCTP, MPTCP): Landlock's TCP
                // rules would not apply to it.
                rules.push(rule(vec![
                    cond(0, SeccompCmpOp::Eq, family)?,
                    cond(2, SeccompCmpOp::Ne, 0)?,
                    cond(2, SeccompCmpOp::Ne, libc::IPPROTO_TCP as u64)?,
                ])?);
            }
        }
        Network::Denied => {
            if policy.unix_sockets {
                rules.push(rule(vec![cond(0, SeccompCmpOp::Ne, unix)?])?);
            } else {
                // Every family: matched by "domain >= 0".
                rules.push(rule(vec![cond(0, SeccompCmpOp::Ge, 0)?])?);
            }
        }
    }
    Ok(rules)
}

/// Matches a socket of any family but IPv4 and IPv6 (and Unix, when the
/// policy allows Unix sockets).
fn other_families(policy: &Policy) -> Result<SeccompRule, PrepareError> {
    let mut conditions = vec![
        cond(0, SeccompCmpOp::Ne, libc::AF_INET as u64)?,
        cond(0, SeccompCmpOp::Ne, libc::AF_INET6 as u64)?,
    ];
    if policy.unix_sockets {
        conditions.push(cond(0, SeccompCmpOp::Ne, libc::AF_UNIX as u64)?);
    }
    rule(conditions)
}
