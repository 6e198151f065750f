//! POSIX shared memory regions, mapped MAP_SHARED so every process sees every write.

use std::ffi::{CStr, c_void};
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::ptr;

use crate::errors::OsError;
use crate::sys;

/// A mapping of a whole region; unmapped on drop unless handed over with `into_raw`.
pub struct Mapping {
    addr: *mut c_void,
    len: usize,
}

impl Mapping {
    /// Gives up ownership: the caller must eventually pass both values to `unmap`.
    pub fn into_raw(self) -> (*mut c_void, usize) {
        let raw = (self.addr, self.len);
        std::mem::forget(self);
        raw
    }

    /// # Safety
    /// `addr` and `len` must come from `into_raw`, and nothing may use the memory afterwards.
    pub unsafe fn unmap(addr: *mut c_void, len: usize) {
        // munmap fails only for arguments that mmap did not return, which into_raw rules out.
        // SAFETY: forwarded from the caller's contract.
        unsafe { sys::munmap(addr, len) };
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: the mapping is still owned here, so nothing else refers to it.
        unsafe { Self::unmap(self.addr, self.len) };
    }
}

/// Attempts at a locked region whose name someone else unlinked before the lock was ours.
const LOCKED_CREATE_ATTEMPTS: usize = 3;

/// Creates a region that must not exist yet (EEXIST otherwise), sized and mapped. With
/// `hold_lock`, this process holds an exclusive flock on it until it exits (see create_locked).
pub fn create(name: &CStr, size: usize, hold_lock: bool) -> Result<Mapping, OsError> {
    let target = name.to_string_lossy();
    let fd = if hold_lock { create_locked(name, &target)? } else { create_fd(name, &target)? };
    let mapped = size_to_off_t(size, &target)
        .and_then(|length| {
            // SAFETY: fd is open.
            sys::check(unsafe { sys::ftruncate(fd.as_raw_fd(), length) }, "ftruncate", &target)?;
            reserve(&fd, length, &target)
        })
        .and_then(|_| map(&fd, size, &target));
    if mapped.is_err() {
        // Leave no half-made region behind for the next creator to trip over with EEXIST.
        // SAFETY: `name` is NUL-terminated.
        unsafe { sys::shm_unlink(name.as_ptr()) };
    } else if hold_lock {
        // Never closed: the kernel drops the lock when this process exits.
        let _held = fd.into_raw_fd();
    }
    mapped
}

fn create_fd(name: &CStr, target: &str) -> Result<OwnedFd, OsError> {
    let flags = sys::O_CREAT | sys::O_EXCL | sys::O_RDWR;
    // SAFETY: `name` is NUL-terminated. glibc's shm_open adds O_CLOEXEC itself.
    let fd = sys::check(unsafe { sys::shm_open(name.as_ptr(), flags, 0o600) }, "shm_open", &target)?;
    // SAFETY: shm_open returned a descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The new region, flocked before anything else is done with it. Whoever reclaims regions
/// whose lock is free (private_regions.ts) and got in between unlinked it: then it is made
/// anew, so that the lock returned is always on the region the name leads to.
fn create_locked(name: &CStr, target: &str) -> Result<OwnedFd, OsError> {
    for _ in 0..LOCKED_CREATE_ATTEMPTS {
        let file = File::from(create_fd(name, target)?);
        // Waits out a reclaimer that locked it first, and may have unlinked it meanwhile.
        // SAFETY: plain system call on an open descriptor.
        let links = sys::retry_on_eintr("flock", &target, || unsafe { sys::flock(file.as_raw_fd(), sys::LOCK_EX) })
            .and_then(|_| file.metadata().map_err(|error| OsError::from_io(&error, "fstat", target)))
            .map(|metadata| metadata.nlink());
        match links {
            Ok(0) => continue,
            Ok(_) => return Ok(file.into()),
            Err(error) => {
                // As in create: no half-made region left behind.
                // SAFETY: `name` is NUL-terminated.
                unsafe { sys::shm_unlink(name.as_ptr()) };
                return Err(error);
            }
        }
    }
    Err(OsError::new(sys::EAGAIN, "shm_open", target))
}

/// Maps an existing region whole, its size taken from the region itself.
pub fn open(name: &CStr) -> Result<Mapping, OsError> {
    let target = name.to_string_lossy();
    // SAFETY: `name` is NUL-terminated.
    let fd = sys::check(unsafe { sys::shm_open(name.as_ptr(), sys::O_RDWR, 0) }, "shm_open", &target)?;
    // SAFETY: shm_open returned a descriptor that nothing else owns.
    let file = File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    let size = file.metadata().map_err(|error| OsError::from_io(&error, "fstat", target.as_ref()))?.len();
    let size = usize::try_from(size).map_err(|_| OsError::new(sys::EOVERFLOW, "fstat", target.as_ref()))?;
    map(&file, size, &target)
}

pub fn unlink(name: &CStr) -> Result<(), OsError> {
    // SAFETY: `name` is NUL-terminated.
    sys::check(unsafe { sys::shm_unlink(name.as_ptr()) }, "shm_unlink", &name.to_string_lossy())?;
    Ok(())
}

/// The descriptor is closed by the caller right after: the mapping keeps the region alive.
fn map(fd: &impl AsRawFd, len: usize, target: &str) -> Result<Mapping, OsError> {
    let prot = sys::PROT_READ | sys::PROT_WRITE;
    // SAFETY: a fresh shared mapping chosen by the kernel; it aliases no Rust memory.
    let addr = unsafe { sys::mmap(ptr::null_mut(), len, prot, sys::MAP_SHARED, fd.as_raw_fd(), 0) };
    if addr == sys::MAP_FAILED {
        return Err(OsError::last("mmap", target));
    }
    Ok(Mapping { addr, len })
}

/// Backs every page now: on a full /dev/shm this fails with ENOSPC here instead of the first
/// write to an unbacked page killing the process with SIGBUS later.
fn reserve(fd: &impl AsRawFd, length: sys::off_t, target: &str) -> Result<(), OsError> {
    // SAFETY: fd is open; posix_fallocate reports its error as the return value.
    match unsafe { sys::posix_fallocate(fd.as_raw_fd(), 0, length) } {
        0 => Ok(()),
        errno => Err(OsError::new(errno, "posix_fallocate", target)),
    }
}

fn size_to_off_t(size: usize, target: &str) -> Result<sys::off_t, OsError> {
    sys::off_t::try_from(size).map_err(|_| OsError::new(sys::EFBIG, "ftruncate", target))
}
