//! Unix datagram sockets, the hot-restart channel between epochs: bind, send with descriptors
//! attached, and receive with a bounded wait.

use std::ffi::c_int;
use std::fmt;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::ptr;
use std::time::{Duration, Instant};

use crate::errors::OsError;
use crate::scm_rights::ControlBuffer;
use crate::sockaddr::{RawAddress, UnixAddress};
use crate::sys::{self, Fd, iovec, msghdr, pollfd};

pub struct Datagram {
    pub data: Vec<u8>,
    pub fds: Vec<OwnedFd>,
}

pub fn bind(address: &UnixAddress) -> Result<OwnedFd, OsError> {
    let fd = socket(address)?;
    if let UnixAddress::Filesystem(path) = address {
        // A file left by an earlier process would make bind fail; Envoy removes it the same way.
        // SAFETY: `path` is NUL-terminated.
        match sys::check(unsafe { sys::unlink(path.as_ptr()) }, "unlink", address) {
            Err(error) if error.errno != sys::ENOENT => return Err(error),
            _ => {}
        }
    }
    let raw = RawAddress::from_unix(address);
    // SAFETY: the pointer and length describe `raw`.
    sys::check(unsafe { sys::bind(fd.as_raw_fd(), raw.as_ptr(), raw.len()) }, "bind", address)?;
    Ok(fd)
}

/// A socket bound to no name, enough to send from: sd_notify's way, where the receiver learns
/// who sent from the kernel's credentials rather than from an address.
pub fn unbound() -> Result<OwnedFd, OsError> {
    socket(&"unbound datagram socket")
}

/// Non-blocking so that a receive never stalls the event loop beyond its own timeout.
fn socket(target: &dyn fmt::Display) -> Result<OwnedFd, OsError> {
    let ty = sys::SOCK_DGRAM | sys::SOCK_NONBLOCK | sys::SOCK_CLOEXEC;
    // SAFETY: plain system call.
    let fd = sys::check(unsafe { sys::socket(sys::AF_UNIX, ty, 0) }, "socket", target)?;
    // SAFETY: socket returned a descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// One datagram to `destination`, with `fds` duplicated into the receiver when not empty.
pub fn send(fd: RawFd, destination: &UnixAddress, data: &[u8], fds: &[RawFd]) -> Result<(), OsError> {
    let mut name = RawAddress::from_unix(destination);
    let mut control = ControlBuffer::carrying(fds);
    let mut iov = iovec { iov_base: data.as_ptr() as *mut _, iov_len: data.len() };
    let message = msghdr {
        msg_name: name.as_mut_ptr(),
        msg_namelen: name.len(),
        msg_iov: &mut iov,
        msg_iovlen: 1,
        msg_control: control.as_mut_ptr(),
        msg_controllen: control.len(),
        msg_flags: 0,
    };
    // SAFETY: every pointer in `message` refers to a live local; sendmsg only reads through them.
    sys::check(unsafe { sys::sendmsg(fd, &message, 0) }, "sendmsg", destination)?;
    Ok(())
}

/// Waits up to `timeout` (zero: not at all) for a datagram; None when none came. Received
/// descriptors are close-on-exec. A datagram longer than `max_bytes` fails with EMSGSIZE rather
/// than arriving cut short.
pub fn receive(fd: RawFd, max_bytes: usize, timeout: Duration) -> Result<Option<Datagram>, OsError> {
    if !wait_readable(fd, timeout)? {
        return Ok(None);
    }
    let mut data = vec![0u8; max_bytes];
    let mut control = ControlBuffer::for_receiving();
    let mut iov = iovec { iov_base: data.as_mut_ptr().cast(), iov_len: data.len() };
    let mut message = msghdr {
        msg_name: ptr::null_mut(),
        msg_namelen: 0,
        msg_iov: &mut iov,
        msg_iovlen: 1,
        msg_control: control.as_mut_ptr(),
        msg_controllen: control.len(),
        msg_flags: 0,
    };
    // MSG_DONTWAIT too: the descriptor may come from elsewhere and be in blocking mode.
    let flags = sys::MSG_DONTWAIT | sys::MSG_CMSG_CLOEXEC;
    // SAFETY: every pointer in `message` refers to a live local buffer of the stated length.
    let received = match sys::check(unsafe { sys::recvmsg(fd, &mut message, flags) }, "recvmsg", &Fd(fd)) {
        // Another reader of the same socket took the datagram that poll announced.
        Err(error) if error.errno == sys::EAGAIN => return Ok(None),
        result => result? as usize,
    };
    let fds = control.into_descriptors(message.msg_controllen);
    if message.msg_flags & (sys::MSG_TRUNC | sys::MSG_CTRUNC) != 0 {
        // `fds` is dropped here, closing whatever did arrive with the mangled message.
        return Err(OsError::new(sys::EMSGSIZE, "recvmsg", Fd(fd).to_string()));
    }
    data.truncate(received);
    Ok(Some(Datagram { data, fds }))
}

fn wait_readable(fd: RawFd, timeout: Duration) -> Result<bool, OsError> {
    let deadline = Instant::now() + timeout;
    loop {
        let remaining = deadline.saturating_duration_since(Instant::now()).as_millis();
        let remaining = c_int::try_from(remaining).unwrap_or(c_int::MAX);
        let mut pfd = pollfd { fd, events: sys::POLLIN, revents: 0 };
        // SAFETY: one pollfd, live for the call.
        match sys::check(unsafe { sys::poll(&mut pfd, 1, remaining) }, "poll", &Fd(fd)) {
            Ok(ready) => return Ok(ready > 0),
            // A signal cut the wait short: wait out what is left of it.
            Err(error) if error.errno == sys::EINTR => continue,
            Err(error) => return Err(error),
        }
    }
}
