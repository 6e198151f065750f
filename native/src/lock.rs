//! Advisory whole-file locks (flock) that serialize proxy processes sharing one base id.
//! The kernel drops a lock when its holder dies, so a crash never leaves it stuck.

use std::fs::OpenOptions;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::Path;

use crate::errors::OsError;
use crate::fd;
use crate::sys::{self, Fd};

/// Opens the existing `path` (ENOENT if absent) and locks it exclusively. With `wait` false a
/// lock held elsewhere fails at once with EAGAIN (Linux's EWOULDBLOCK); with `wait` true it
/// blocks. Never creating it: a region's root its owner just removed must stay removed.
pub fn lock(path: &Path, wait: bool) -> Result<OwnedFd, OsError> {
    let target = path.display();
    // std opens with O_CLOEXEC.
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|error| OsError::from_io(&error, "open", target.to_string()))?;
    let operation = if wait { sys::LOCK_EX } else { sys::LOCK_EX | sys::LOCK_NB };
    // SAFETY: plain system call on an open descriptor.
    sys::retry_on_eintr("flock", &target, || unsafe { sys::flock(file.as_raw_fd(), operation) })?;
    Ok(file.into())
}

/// Releases the lock and closes the descriptor `lock` returned.
pub fn unlock(lock_fd: RawFd) -> Result<(), OsError> {
    // SAFETY: plain system call; a bad descriptor is reported as EBADF.
    sys::check(unsafe { sys::flock(lock_fd, sys::LOCK_UN) }, "flock", &Fd(lock_fd))?;
    fd::close(lock_fd)
}
