//! Descriptors handed to JavaScript as plain numbers, and closing them again.

use std::os::fd::{IntoRawFd, OwnedFd, RawFd};

use crate::errors::OsError;
use crate::sys::{self, Fd};

/// Hands the descriptor over: from here on JavaScript owns it and must close it.
pub fn release(fd: OwnedFd) -> RawFd {
    fd.into_raw_fd()
}

pub fn close(fd: RawFd) -> Result<(), OsError> {
    // Not retried on EINTR: Linux has released the descriptor even then, and it may be reused.
    // SAFETY: closing a number JavaScript passed; at worst the kernel answers EBADF.
    sys::check(unsafe { sys::close(fd) }, "close", &Fd(fd))?;
    Ok(())
}
