//! A network namespace of the command's own, where only a proxy is
//! reachable.
//!
//! Landlock's TCP rules are per port, not per address: a command allowed
//! to connect to the proxy's port could reach any host on that port. So a
//! command whose network goes through a proxy gets a new network namespace
//! (inside a user namespace, so no privilege is needed) in which only the
//! loopback interface exists. In the child, before it executes the
//! program, Baton brings loopback up and opens a listening socket on
//! `127.0.0.1:PORT` for each proxy port, then sends those sockets to the
//! parent over a socket pair. The parent serves them with its proxy: the
//! command's `HTTP_PROXY=http://127.0.0.1:PORT` reaches Baton, and nothing
//! else exists for it to reach.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// Most proxy ports per command (HTTP and SOCKS, with room to spare).
pub(crate) const MAX_PORTS: usize = 4;

/// The parent's half: a socket pair whose child end the child inherits.
#[derive(Debug)]
pub(crate) struct Channel {
    parent: OwnedFd,
    child: OwnedFd,
    ports: Vec<u16>,
}

impl Channel {
    pub(crate) fn new(ports: &[u16]) -> std::io::Result<Channel> {
        let mut fds = [0; 2];
        // SAFETY: socketpair into our own array.
        let made = unsafe {
            libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
                0,
                fds.as_mut_ptr(),
            )
        };
        if made != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: fresh fds owned by nobody else.
        let (parent, child) =
            unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        Ok(Channel {
            parent,
            child,
            ports: ports.iter().copied().take(MAX_PORTS).collect(),
        })
    }

    pub(crate) fn raw(&self) -> RawNet {
        let mut ports = [0u16; MAX_PORTS];
        for (slot, port) in ports.iter_mut().zip(&self.ports) {
            *slot = *port;
        }
        RawNet {
            channel: self.child.as_raw_fd(),
            ports,
            count: self.ports.len(),
        }
    }

    /// The listeners the child sent (call after the child executed).
    pub(crate) fn receive(&self) -> std::io::Result<Vec<std::net::TcpListener>> {
        let mut data = [0u8; 1];
        let mut iov = libc::iovec {
            iov_base: data.as_mut_ptr().cast(),
            iov_len: 1,
        };
        // Room for MAX_PORTS descriptors.
        let mut control = [0u64; 16];
        // SAFETY: a zeroed msghdr pointing at our own buffers.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&control);
        // SAFETY: receiving into the buffers described above.
        let n = unsafe {
            libc::recvmsg(
                self.parent.as_raw_fd(),
                &mut msg,
                libc::MSG_DONTWAIT | libc::MSG_CMSG_CLOEXEC,
            )
        };
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mut listeners = Vec::new();
        // SAFETY: walking the control messages the kernel wrote.
        unsafe {
            let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
            while !cmsg.is_null() {
                if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                    let data = libc::CMSG_DATA(cmsg) as *const RawFd;
                    let len = (*cmsg).cmsg_len as usize - libc::CMSG_LEN(0) as usize;
                    for i in 0..len / std::mem::size_of::<RawFd>() {
                        let fd = std::ptr::read_unaligned(data.add(i));
                        listeners.push(std::net::TcpListener::from(OwnedFd::from_raw_fd(fd)));
                    }
                }
                cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
            }
        }
        Ok(listeners)
    }
}

/// The child's view: the channel's child end and the ports.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RawNet {
    channel: RawFd,
    ports: [u16; MAX_PORTS],
    count: usize,
}

impl RawNet {
    pub(crate) fn none() -> RawNet {
        RawNet {
            channel: -1,
            ports: [0; MAX_PORTS],
            count: 0,
        }
    }

    pub(crate) fn is_set(&self) -> bool {
        self.channel >= 0
    }
}

/// In a child cloned into new user and network namespaces (its id maps
/// already written): loopback up, one listener per port, sent to the
/// parent.
///
/// # Safety
/// Raw system calls only; stack memory only.
pub(crate) unsafe fn apply(net: &RawNet) -> Result<(), ()> {
    unsafe {
        let s = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if s < 0 {
            return Err(());
        }
        let mut ifr: libc::ifreq = std::mem::zeroed();
        ifr.ifr_name[0] = b'l' as libc::c_char;
        ifr.ifr_name[1] = b'o' as libc::c_char;
        if libc::ioctl(s, libc::SIOCGIFFLAGS, &mut ifr) != 0 {
            return Err(());
        }
        ifr.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
        if libc::ioctl(s, libc::SIOCSIFFLAGS, &ifr) != 0 {
            return Err(());
        }
        libc::close(s);
        let mut fds = [-1 as RawFd; MAX_PORTS];
        for (i, &port) in net.ports[..net.count].iter().enumerate() {
            let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
            if fd < 0 {
                return Err(());
            }
            let mut addr: libc::sockaddr_in = std::mem::zeroed();
            addr.sin_family = libc::AF_INET as libc::sa_family_t;
            addr.sin_port = port.to_be();
            addr.sin_addr.s_addr = u32::from_be_bytes([127, 0, 0, 1]).to_be();
            let bound = libc::bind(
                fd,
                (&addr as *const libc::sockaddr_in).cast(),
                std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
            );
            if bound != 0 || libc::listen(fd, 128) != 0 {
                return Err(());
            }
            fds[i] = fd;
        }
        // One message carrying every listener.
        let mut byte = 0u8;
        let mut iov = libc::iovec {
            iov_base: (&mut byte as *mut u8).cast(),
            iov_len: 1,
        };
        let mut control = [0u64; 16];
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        if net.count > 0 {
            let bytes = (net.count * std::mem::size_of::<RawFd>()) as u32;
            msg.msg_control = control.as_mut_ptr().cast();
            msg.msg_controllen = libc::CMSG_SPACE(bytes) as usize;
            let cmsg = libc::CMSG_FIRSTHDR(&msg);
            (*cmsg).cmsg_level = libc::SOL_SOCKET;
            (*cmsg).cmsg_type = libc::SCM_RIGHTS;
            (*cmsg).cmsg_len = libc::CMSG_LEN(bytes) as usize;
            let data = libc::CMSG_DATA(cmsg) as *mut RawFd;
            for (i, fd) in fds[..net.count].iter().enumerate() {
                std::ptr::write_unaligned(data.add(i), *fd);
            }
        }
        if libc::sendmsg(net.channel, &msg, 0) < 0 {
            return Err(());
        }
        // The listeners are the parent's now; ours close at exec
        // (close-on-exec), the command never holds them.
    }
    Ok(())
}
