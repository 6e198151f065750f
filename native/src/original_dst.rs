//! The destination a connection had before an iptables REDIRECT/DNAT rewrote it, for clusters
//! of type ORIGINAL_DST (Envoy's Utility::getOriginalDst).

use std::ffi::c_int;
use std::net::SocketAddr;
use std::os::fd::RawFd;

use crate::errors::OsError;
use crate::sockaddr::{self, RawAddress};
use crate::sys::{self, Fd};

/// None when the connection was not translated: the kernel answers ENOENT when conntrack has no
/// entry and ENOPROTOOPT when conntrack is not loaded at all. None as well for a non-IP socket.
pub fn original_destination(fd: RawFd) -> Result<Option<SocketAddr>, OsError> {
    let (level, option) = match sockaddr::local_address(fd)?.family() {
        sys::AF_INET => (sys::SOL_IP, sys::SO_ORIGINAL_DST),
        sys::AF_INET6 => (sys::SOL_IPV6, sys::IP6T_SO_ORIGINAL_DST),
        _ => return Ok(None),
    };
    let mut destination = RawAddress::empty();
    // SAFETY: the pointer and length describe `destination`.
    let ret = unsafe { sys::getsockopt(fd, level, option, destination.as_mut_ptr(), destination.len_mut()) };
    match sys::check(ret, "getsockopt", &Fd(fd)) {
        Ok(_) => Ok(destination.to_ip()),
        Err(error) if is_untranslated(error.errno) => Ok(None),
        Err(error) => Err(error),
    }
}

fn is_untranslated(errno: c_int) -> bool {
    errno == sys::ENOENT || errno == sys::ENOPROTOOPT
}
