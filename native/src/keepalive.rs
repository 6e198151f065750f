//! TCP keepalive on an upstream connection (Envoy's upstream_connection_options.tcp_keepalive):
//! SO_KEEPALIVE plus the three Linux TCP_KEEP* knobs, each left at the system default when
//! not given, and reading them back.

use std::ffi::{c_int, c_void};
use std::mem::size_of;
use std::os::fd::RawFd;

use crate::errors::OsError;
use crate::sys::{self, Fd};

/// Keepalive to turn on; None leaves a knob at the system default.
pub struct Keepalive {
    pub probes: Option<c_int>,
    pub time_s: Option<c_int>,
    pub interval_s: Option<c_int>,
}

/// What the kernel holds for a socket, whether set here or by default.
pub struct KeepaliveState {
    pub enabled: bool,
    pub probes: c_int,
    pub time_s: c_int,
    pub interval_s: c_int,
}

pub fn set(fd: RawFd, settings: &Keepalive) -> Result<(), OsError> {
    set_int(fd, sys::SOL_SOCKET, sys::SO_KEEPALIVE, 1)?;
    if let Some(probes) = settings.probes {
        set_int(fd, sys::IPPROTO_TCP, sys::TCP_KEEPCNT, probes)?;
    }
    if let Some(time) = settings.time_s {
        set_int(fd, sys::IPPROTO_TCP, sys::TCP_KEEPIDLE, time)?;
    }
    if let Some(interval) = settings.interval_s {
        set_int(fd, sys::IPPROTO_TCP, sys::TCP_KEEPINTVL, interval)?;
    }
    Ok(())
}

pub fn get(fd: RawFd) -> Result<KeepaliveState, OsError> {
    Ok(KeepaliveState {
        enabled: get_int(fd, sys::SOL_SOCKET, sys::SO_KEEPALIVE)? != 0,
        probes: get_int(fd, sys::IPPROTO_TCP, sys::TCP_KEEPCNT)?,
        time_s: get_int(fd, sys::IPPROTO_TCP, sys::TCP_KEEPIDLE)?,
        interval_s: get_int(fd, sys::IPPROTO_TCP, sys::TCP_KEEPINTVL)?,
    })
}

fn set_int(fd: RawFd, level: c_int, name: c_int, value: c_int) -> Result<(), OsError> {
    let pointer = &value as *const c_int as *const c_void;
    // SAFETY: the pointer and length describe `value`.
    let ret = unsafe { sys::setsockopt(fd, level, name, pointer, size_of::<c_int>() as u32) };
    sys::check(ret, "setsockopt", &Fd(fd))?;
    Ok(())
}

fn get_int(fd: RawFd, level: c_int, name: c_int) -> Result<c_int, OsError> {
    let mut value: c_int = 0;
    let mut len = size_of::<c_int>() as sys::socklen_t;
    // SAFETY: the pointer and length describe `value`.
    let ret = unsafe { sys::getsockopt(fd, level, name, &mut value as *mut c_int as *mut c_void, &mut len) };
    sys::check(ret, "getsockopt", &Fd(fd))?;
    Ok(value)
}
