//! The libc functions, constants and structures the addon uses, declared for Linux x86_64.

#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_int, c_short, c_void};
use std::fmt;

use crate::errors::OsError;

pub type socklen_t = u32;
pub type sa_family_t = u16;
pub type mode_t = u32;
pub type off_t = i64;

pub const AF_UNIX: c_int = 1;
pub const AF_INET: c_int = 2;
pub const AF_INET6: c_int = 10;

pub const SOCK_STREAM: c_int = 1;
pub const SOCK_DGRAM: c_int = 2;
pub const SOCK_NONBLOCK: c_int = 0o4000;
pub const SOCK_CLOEXEC: c_int = 0o2000000;

pub const SOL_IP: c_int = 0;
pub const SOL_SOCKET: c_int = 1;
pub const SOL_IPV6: c_int = 41;
pub const SO_REUSEADDR: c_int = 2;
pub const SO_ERROR: c_int = 4;
pub const SO_KEEPALIVE: c_int = 9;
pub const SO_REUSEPORT: c_int = 15;
pub const IPPROTO_TCP: c_int = 6;
pub const TCP_KEEPIDLE: c_int = 4;
pub const TCP_KEEPINTVL: c_int = 5;
pub const TCP_KEEPCNT: c_int = 6;
pub const IPV6_V6ONLY: c_int = 26;
/// linux/netfilter_ipv4.h and linux/netfilter_ipv6/ip6_tables.h share the number.
pub const SO_ORIGINAL_DST: c_int = 80;
pub const IP6T_SO_ORIGINAL_DST: c_int = 80;

pub const SCM_RIGHTS: c_int = 1;
/// The most descriptors one SCM_RIGHTS message may carry (include/net/scm.h).
pub const SCM_MAX_FD: usize = 253;

pub const MSG_CTRUNC: c_int = 0x8;
pub const MSG_TRUNC: c_int = 0x20;
pub const MSG_DONTWAIT: c_int = 0x40;
pub const MSG_NOSIGNAL: c_int = 0x4000;
pub const MSG_CMSG_CLOEXEC: c_int = 0x4000_0000;

pub const POLLIN: c_short = 0x1;

pub const O_RDWR: c_int = 0o2;
pub const O_NONBLOCK: c_int = 0o4000;
pub const F_GETFL: c_int = 3;
pub const F_SETFL: c_int = 4;
pub const F_DUPFD_CLOEXEC: c_int = 1030;
pub const O_CREAT: c_int = 0o100;
pub const O_EXCL: c_int = 0o200;

pub const PROT_READ: c_int = 0x1;
pub const PROT_WRITE: c_int = 0x2;
pub const MAP_SHARED: c_int = 0x1;
pub const MAP_FAILED: *mut c_void = !0usize as *mut c_void;

pub const LOCK_EX: c_int = 2;
pub const LOCK_NB: c_int = 4;
pub const LOCK_UN: c_int = 8;

pub const EINTR: i32 = 4;
pub const ENOENT: i32 = 2;
pub const EIO: i32 = 5;
pub const EAGAIN: i32 = 11;
pub const EFBIG: i32 = 27;
pub const EOVERFLOW: i32 = 75;
pub const EMSGSIZE: i32 = 90;
pub const ENOPROTOOPT: i32 = 92;
pub const ECONNABORTED: i32 = 103;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct sockaddr_in {
    pub sin_family: sa_family_t,
    pub sin_port: u16,
    pub sin_addr: [u8; 4],
    pub sin_zero: [u8; 8],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct sockaddr_in6 {
    pub sin6_family: sa_family_t,
    pub sin6_port: u16,
    pub sin6_flowinfo: u32,
    pub sin6_addr: [u8; 16],
    pub sin6_scope_id: u32,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct sockaddr_un {
    pub sun_family: sa_family_t,
    pub sun_path: [u8; 108],
}

/// Large and aligned enough for any address family.
#[repr(C, align(8))]
#[derive(Clone, Copy)]
pub struct sockaddr_storage {
    pub ss_family: sa_family_t,
    pub ss_data: [u8; 126],
}

#[repr(C)]
pub struct iovec {
    pub iov_base: *mut c_void,
    pub iov_len: usize,
}

#[repr(C)]
pub struct msghdr {
    pub msg_name: *mut c_void,
    pub msg_namelen: socklen_t,
    pub msg_iov: *mut iovec,
    pub msg_iovlen: usize,
    pub msg_control: *mut c_void,
    pub msg_controllen: usize,
    pub msg_flags: c_int,
}

#[repr(C)]
pub struct cmsghdr {
    pub cmsg_len: usize,
    pub cmsg_level: c_int,
    pub cmsg_type: c_int,
}

#[repr(C)]
pub struct pollfd {
    pub fd: c_int,
    pub events: c_short,
    pub revents: c_short,
}

unsafe extern "C" {
    pub fn socket(domain: c_int, ty: c_int, protocol: c_int) -> c_int;
    pub fn setsockopt(fd: c_int, level: c_int, name: c_int, value: *const c_void, len: socklen_t) -> c_int;
    pub fn getsockopt(fd: c_int, level: c_int, name: c_int, value: *mut c_void, len: *mut socklen_t) -> c_int;
    pub fn bind(fd: c_int, addr: *const c_void, len: socklen_t) -> c_int;
    pub fn listen(fd: c_int, backlog: c_int) -> c_int;
    pub fn accept4(fd: c_int, addr: *mut c_void, len: *mut socklen_t, flags: c_int) -> c_int;
    pub fn getsockname(fd: c_int, addr: *mut c_void, len: *mut socklen_t) -> c_int;
    pub fn sendmsg(fd: c_int, msg: *const msghdr, flags: c_int) -> isize;
    pub fn read(fd: c_int, buf: *mut c_void, count: usize) -> isize;
    pub fn recvmsg(fd: c_int, msg: *mut msghdr, flags: c_int) -> isize;
    pub fn poll(fds: *mut pollfd, nfds: u64, timeout: c_int) -> c_int;
    pub fn close(fd: c_int) -> c_int;
    pub fn fcntl(fd: c_int, cmd: c_int, ...) -> c_int;
    pub fn unlink(path: *const c_char) -> c_int;
    pub fn flock(fd: c_int, operation: c_int) -> c_int;
    pub fn ftruncate(fd: c_int, length: off_t) -> c_int;
    /// Returns the error number itself (not -1 and errno).
    pub fn posix_fallocate(fd: c_int, offset: off_t, len: off_t) -> c_int;
    pub fn shm_open(name: *const c_char, oflag: c_int, mode: mode_t) -> c_int;
    pub fn shm_unlink(name: *const c_char) -> c_int;
    pub fn mmap(addr: *mut c_void, len: usize, prot: c_int, flags: c_int, fd: c_int, offset: off_t) -> *mut c_void;
    pub fn munmap(addr: *mut c_void, len: usize) -> c_int;
    pub fn prctl(option: c_int, arg2: u64, arg3: u64, arg4: u64, arg5: u64) -> c_int;
    pub fn malloc_trim(pad: usize) -> c_int;
}

/// A system call's return value, where -1 means "failed, see errno".
pub trait SyscallReturn: Copy {
    fn failed(self) -> bool;
}

impl SyscallReturn for c_int {
    fn failed(self) -> bool {
        self == -1
    }
}

impl SyscallReturn for isize {
    fn failed(self) -> bool {
        self == -1
    }
}

/// Turns libc's "-1 and errno" convention into a Result; `target` is formatted only on failure.
pub fn check<T: SyscallReturn>(ret: T, syscall: &'static str, target: &dyn fmt::Display) -> Result<T, OsError> {
    if ret.failed() { Err(OsError::last(syscall, target.to_string())) } else { Ok(ret) }
}

/// Repeats a call interrupted by a signal (node installs handlers, e.g. for SIGCHLD).
pub fn retry_on_eintr<T: SyscallReturn>(
    syscall: &'static str,
    target: &dyn fmt::Display,
    mut call: impl FnMut() -> T,
) -> Result<T, OsError> {
    loop {
        match check(call(), syscall, target) {
            Err(error) if error.errno == EINTR => continue,
            result => return result,
        }
    }
}

/// Displays a descriptor as the target of a failed call: "fd 12".
pub struct Fd(pub c_int);

impl fmt::Display for Fd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "fd {}", self.0)
    }
}
