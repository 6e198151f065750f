//! The few libuv functions the addon calls on node's own loop (node exports libuv to addons):
//! uv_poll handles that watch a descriptor for readiness.

use std::alloc::{self, Layout};
use std::ffi::{c_int, c_void};

use crate::env::{Env, check};
use crate::errors::{OsError, Result};
use crate::napi::napi_get_uv_event_loop;

/// libuv's uv_handle_type for uv_poll_t, and its events.
const UV_POLL: c_int = 8;
pub const UV_READABLE: c_int = 1;
pub const UV_WRITABLE: c_int = 2;

pub type PollCb = unsafe extern "C" fn(handle: *mut c_void, status: c_int, events: c_int);
pub type CloseCb = unsafe extern "C" fn(handle: *mut c_void);

unsafe extern "C" {
    fn uv_handle_size(kind: c_int) -> usize;
    fn uv_poll_init(event_loop: *mut c_void, handle: *mut c_void, fd: c_int) -> c_int;
    fn uv_poll_start(handle: *mut c_void, events: c_int, cb: PollCb) -> c_int;
    fn uv_poll_stop(handle: *mut c_void) -> c_int;
    fn uv_close(handle: *mut c_void, cb: CloseCb);
}

/// A uv_poll_t's memory: zeroed, its first word (`data`) free for its owner's pointer.
pub fn poll_layout() -> Layout {
    // SAFETY: uv_handle_size is a pure query.
    Layout::from_size_align(unsafe { uv_handle_size(UV_POLL) }, 16).expect("uv_poll_t layout")
}

/// Allocates a poll handle whose `data` is `owner` and initializes it on the loop of `env` for
/// `fd`. On failure nothing is left allocated.
pub fn poll_new(env: Env, fd: c_int, owner: *mut c_void) -> Result<*mut c_void> {
    let mut event_loop = std::ptr::null_mut();
    // SAFETY: the out-pointer is a local; `env` is the live env of this call.
    check(unsafe { napi_get_uv_event_loop(env.raw(), &mut event_loop) }, "napi_get_uv_event_loop")?;
    let layout = poll_layout();
    // SAFETY: a non-zero size.
    let handle = unsafe { alloc::alloc_zeroed(layout) }.cast::<c_void>();
    // SAFETY: `handle` is a zeroed block of uv_poll_t's size; its first field is `data`.
    unsafe { *handle.cast::<*mut c_void>() = owner };
    let status = unsafe { uv_poll_init(event_loop.cast(), handle, fd) };
    if status != 0 {
        // SAFETY: libuv did not take the handle.
        unsafe { alloc::dealloc(handle.cast(), layout) };
        return Err(OsError::new(-status, "uv_poll_init", format!("fd {fd}")).into());
    }
    Ok(handle)
}

/// The owner pointer poll_new stored in the handle.
///
/// # Safety
/// `handle` came from poll_new.
pub unsafe fn poll_owner<T>(handle: *mut c_void) -> *mut T {
    // SAFETY: per the contract, the first word is the owner.
    unsafe { *handle.cast::<*mut T>() }
}

/// Watches for `events` (0 stops watching), calling `cb`.
///
/// # Safety
/// `handle` came from poll_new and is not closed.
pub unsafe fn poll_watch(handle: *mut c_void, fd: c_int, events: c_int, cb: PollCb) -> Result<()> {
    // SAFETY: per the contract.
    let status =
        if events == 0 { unsafe { uv_poll_stop(handle) } } else { unsafe { uv_poll_start(handle, events, cb) } };
    if status != 0 {
        let call = if events == 0 { "uv_poll_stop" } else { "uv_poll_start" };
        return Err(OsError::new(-status, call, format!("fd {fd}")).into());
    }
    Ok(())
}

/// Stops the handle at once; `closed` runs on a later turn of the loop, which then frees it
/// with poll_free.
///
/// # Safety
/// `handle` came from poll_new and is closed once.
pub unsafe fn poll_close(handle: *mut c_void, closed: CloseCb) {
    // SAFETY: per the contract.
    unsafe { uv_close(handle, closed) };
}

/// Frees a handle's memory, in its close callback.
///
/// # Safety
/// `handle` came from poll_new and libuv is done with it.
pub unsafe fn poll_free(handle: *mut c_void) {
    // SAFETY: allocated with this layout in poll_new.
    unsafe { alloc::dealloc(handle.cast(), poll_layout()) };
}
