//! One send of bytes JavaScript holds (a latin1 string or a Buffer, and a Buffer after it in the
//! same system call) straight to a connected socket: for a small write, node's stream layer
//! costs more than the system call it ends in.

use std::ffi::c_int;
use std::ptr;

use crate::sys;

/// The most pieces one send takes; any beyond are not sent.
pub const MAX_PIECES: usize = 2;

/// The bytes the kernel took, all of them or a part (0: the socket would block), or the errno
/// that failed the send.
pub fn send(fd: c_int, pieces: &[&[u8]]) -> Result<usize, i32> {
    let mut iov = [const { sys::iovec { iov_base: ptr::null_mut(), iov_len: 0 } }; MAX_PIECES];
    let mut count = 0;
    for piece in pieces.iter().filter(|piece| !piece.is_empty()).take(MAX_PIECES) {
        iov[count] = sys::iovec { iov_base: piece.as_ptr() as *mut _, iov_len: piece.len() };
        count += 1;
    }
    if count == 0 {
        return Ok(0);
    }
    let message = sys::msghdr {
        msg_name: ptr::null_mut(),
        msg_namelen: 0,
        msg_iov: iov.as_mut_ptr(),
        msg_iovlen: count,
        msg_control: ptr::null_mut(),
        msg_controllen: 0,
        msg_flags: 0,
    };
    loop {
        // SAFETY: the iovecs describe live slices. MSG_NOSIGNAL: a closed peer is EPIPE, not a
        // signal; MSG_DONTWAIT: never block the loop, whatever the descriptor's flags.
        let sent = unsafe { sys::sendmsg(fd, &message, sys::MSG_NOSIGNAL | sys::MSG_DONTWAIT) };
        if sent >= 0 {
            return Ok(sent as usize);
        }
        match std::io::Error::last_os_error().raw_os_error().unwrap_or(sys::EIO) {
            sys::EINTR => continue,
            sys::EAGAIN => return Ok(0),
            errno => return Err(errno),
        }
    }
}
