//! The SOCKS5 front end (RFC 1928): no authentication, `CONNECT` only, to a
//! domain name, an IPv4 or an IPv6 address.
//!
//! The reply always carries 0.0.0.0:0 as the bound address: clients do not
//! need it for CONNECT, and it would tell the sandboxed program which
//! address the host uses outward.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::event::Protocol;
use super::gate::{Gate, Refusal};
use super::host::Host;
use super::server::{linger_close, relay, Limits};

const VERSION: u8 = 5;
const METHOD_NO_AUTH: u8 = 0x00;
const METHOD_NONE_ACCEPTABLE: u8 = 0xff;
const CMD_CONNECT: u8 = 0x01;
const ATYP_IPV4: u8 = 0x01;
const ATYP_DOMAIN: u8 = 0x03;
const ATYP_IPV6: u8 = 0x04;

/// RFC 1928 §6 reply codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Reply {
    Succeeded = 0x00,
    GeneralFailure = 0x01,
    NotAllowed = 0x02,
    NetworkUnreachable = 0x03,
    HostUnreachable = 0x04,
    ConnectionRefused = 0x05,
    CommandNotSupported = 0x07,
    AddressTypeNotSupported = 0x08,
}

/// Serves one client connection.
pub(crate) async fn serve<S>(mut client: S, gate: &Gate, limits: &Limits)
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    let request = match tokio::time::timeout(limits.head_timeout, negotiate(&mut client)).await {
        Ok(Ok(request)) => request,
        Ok(Err(Some(reply))) => return answer(&mut client, reply).await,
        // A protocol violation before a reply is possible, an I/O error or
        // a too-slow client: just close.
        Ok(Err(None)) | Err(_) => return,
    };
    let (host, port) = request;
    let mut upstream = match gate.open(&host, port, Protocol::Socks5).await {
        Ok(stream) => stream,
        Err(Refusal::Policy(_)) => return answer(&mut client, Reply::NotAllowed).await,
        Err(Refusal::Unresolvable(_)) => return answer(&mut client, Reply::HostUnreachable).await,
        Err(Refusal::Connect(e)) => return answer(&mut client, connect_reply(&e)).await,
    };
    let succeeded = reply_bytes(Reply::Succeeded);
    relay(&mut client, &mut upstream, &succeeded, &[], limits).await;
}

/// Runs the method negotiation and reads the request. `Err(Some(reply))`
/// means the client must be told why; `Err(None)` means close silently.
async fn negotiate<S>(client: &mut S) -> Result<(Host, u16), Option<Reply>>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let mut greeting = [0u8; 2];
    client.read_exact(&mut greeting).await.map_err(|_| None)?;
    if greeting[0] != VERSION {
        return Err(None);
    }
    let mut methods = vec![0u8; usize::from(greeting[1])];
    client.read_exact(&mut methods).await.map_err(|_| None)?;
    if !methods.contains(&METHOD_NO_AUTH) {
        let _ = client.write_all(&[VERSION, METHOD_NONE_ACCEPTABLE]).await;
        return Err(None);
    }
    client
        .write_all(&[VERSION, METHOD_NO_AUTH])
        .await
        .map_err(|_| None)?;

    let mut header = [0u8; 4];
    client.read_exact(&mut header).await.map_err(|_| None)?;
    let [version, command, reserved, atyp] = header;
    if version != VERSION || reserved != 0 {
        return Err(Some(Reply::GeneralFailure));
    }
    let host = match atyp {
        ATYP_IPV4 => {
            let mut octets = [0u8; 4];
            client.read_exact(&mut octets).await.map_err(|_| None)?;
            Some(Host::Ip(IpAddr::V4(Ipv4Addr::from(octets))))
        }
        ATYP_IPV6 => {
            let mut octets = [0u8; 16];
            client.read_exact(&mut octets).await.map_err(|_| None)?;
            Some(Host::Ip(IpAddr::V6(Ipv6Addr::from(octets))))
        }
        ATYP_DOMAIN => {
            let mut len = [0u8; 1];
            client.read_exact(&mut len).await.map_err(|_| None)?;
            let mut name = vec![0u8; usize::from(len[0])];
            client.read_exact(&mut name).await.map_err(|_| None)?;
            // Some clients put an IP literal here; Host::parse reads it as
            // an address, so it needs an IP pattern like any other literal.
            std::str::from_utf8(&name)
                .ok()
                .and_then(|n| Host::parse(n).ok())
        }
        // The address length is unknown, so the request cannot be read on.
        _ => return Err(Some(Reply::AddressTypeNotSupported)),
    };
    let mut port = [0u8; 2];
    client.read_exact(&mut port).await.map_err(|_| None)?;
    // The whole request is read before any refusal, so the reply is not
    // followed by unread bytes (which would make the close a reset).
    if command != CMD_CONNECT {
        return Err(Some(Reply::CommandNotSupported));
    }
    let Some(host) = host else {
        return Err(Some(Reply::NotAllowed));
    };
    match u16::from_be_bytes(port) {
        0 => Err(Some(Reply::GeneralFailure)),
        port => Ok((host, port)),
    }
}

/// Maps a failed connect to the closest reply code.
fn connect_reply(e: &io::Error) -> Reply {
    match e.kind() {
        io::ErrorKind::ConnectionRefused => Reply::ConnectionRefused,
        io::ErrorKind::NetworkUnreachable => Reply::NetworkUnreachable,
        io::ErrorKind::HostUnreachable | io::ErrorKind::TimedOut => Reply::HostUnreachable,
        _ => Reply::GeneralFailure,
    }
}

fn reply_bytes(reply: Reply) -> [u8; 10] {
    [VERSION, reply as u8, 0, ATYP_IPV4, 0, 0, 0, 0, 0, 0]
}

/// Sends a failure reply and closes.
async fn answer<S: AsyncRead + AsyncWrite + Unpin>(client: &mut S, reply: Reply) {
    let _ = client.write_all(&reply_bytes(reply)).await;
    linger_close(client).await;
}
