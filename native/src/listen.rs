//! TCP listen sockets made here rather than by node, so that the supervisor can hand the same
//! descriptor to every worker and to the next hot-restart epoch.

use std::ffi::{c_int, c_void};
use std::mem::size_of;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use crate::errors::OsError;
use crate::sockaddr::{self, RawAddress};
use crate::sys;

pub struct Listener {
    pub fd: OwnedFd,
    /// The bound port: the kernel's choice when asked for port 0.
    pub port: u16,
}

/// socket, SO_REUSEADDR (and IPV6_V6ONLY for IPv6), bind, listen. Made blocking: the acceptor
/// (acceptor.rs) makes it non-blocking before it accepts; close-on-exec keeps it out of
/// unrelated children. `reuse_port` sets SO_REUSEPORT: several such sockets bind the same
/// address and the kernel spreads new connections over them.
pub fn listen_tcp(address: SocketAddr, backlog: c_int, reuse_port: bool) -> Result<Listener, OsError> {
    let family = if address.is_ipv4() { sys::AF_INET } else { sys::AF_INET6 };
    let ty = sys::SOCK_STREAM | sys::SOCK_CLOEXEC;
    // SAFETY: plain system call.
    let fd = sys::check(unsafe { sys::socket(family, ty, 0) }, "socket", &address)?;
    // SAFETY: socket returned a descriptor that nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };

    set_flag(&fd, sys::SOL_SOCKET, sys::SO_REUSEADDR, &address)?;
    if reuse_port {
        set_flag(&fd, sys::SOL_SOCKET, sys::SO_REUSEPORT, &address)?;
    }
    if family == sys::AF_INET6 {
        // "::" then means IPv6 only, as in Envoy, so that 0.0.0.0 can be bound beside it.
        set_flag(&fd, sys::SOL_IPV6, sys::IPV6_V6ONLY, &address)?;
    }
    let raw = RawAddress::from_ip(&address);
    // SAFETY: the pointer and length describe `raw`.
    sys::check(unsafe { sys::bind(fd.as_raw_fd(), raw.as_ptr(), raw.len()) }, "bind", &address)?;
    // SAFETY: plain system call on an open socket.
    sys::check(unsafe { sys::listen(fd.as_raw_fd(), backlog) }, "listen", &address)?;

    let bound = sockaddr::local_address(fd.as_raw_fd())?.to_ip();
    let port = bound.map_or(address.port(), |bound| bound.port());
    Ok(Listener { fd, port })
}

fn set_flag(fd: &OwnedFd, level: c_int, name: c_int, address: &SocketAddr) -> Result<(), OsError> {
    let on: c_int = 1;
    let value = &on as *const c_int as *const c_void;
    // SAFETY: the pointer and length describe `on`.
    let ret = unsafe { sys::setsockopt(fd.as_raw_fd(), level, name, value, size_of::<c_int>() as u32) };
    sys::check(ret, "setsockopt", address)?;
    Ok(())
}
