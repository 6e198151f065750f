//! Socket addresses: std's IP addresses and our Unix socket names, converted to and from the
//! kernel's sockaddr structures.

use std::ffi::{CString, c_int, c_void};
use std::fmt;
use std::mem::{size_of, zeroed};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::ptr;

use crate::errors::{ArgumentError, OsError};
use crate::sys::{self, Fd, sa_family_t, sockaddr_in, sockaddr_in6, sockaddr_storage, sockaddr_un, socklen_t};

/// `sun_path` holds 108 bytes; keeping one for the terminating NUL (filesystem) or the leading
/// NUL (abstract) leaves 107 for the name either way.
const MAX_UNIX_NAME: usize = 107;

/// A Unix socket name as the proxy spells it: a leading '@' selects the abstract namespace
/// (as Envoy's `@envoy_domain_socket`), anything else is a filesystem path.
pub enum UnixAddress {
    Filesystem(CString),
    Abstract(Vec<u8>),
}

impl UnixAddress {
    /// `name` is the argument name used in error messages.
    pub fn parse(name: &str, path: String) -> Result<Self, ArgumentError> {
        let (address, length) = match path.strip_prefix('@') {
            Some(abstract_name) => {
                let bytes = abstract_name.as_bytes().to_vec();
                let length = bytes.len();
                (UnixAddress::Abstract(bytes), length)
            }
            None => {
                let length = path.len();
                let received = format!("{path:?}");
                let path = CString::new(path)
                    .map_err(|_| ArgumentError::invalid_value(name, "must not contain NUL bytes", &received))?;
                (UnixAddress::Filesystem(path), length)
            }
        };
        if length == 0 {
            return Err(ArgumentError::invalid_value(
                name,
                "must name a socket",
                &format!("{:?}", address.to_string()),
            ));
        }
        if length > MAX_UNIX_NAME {
            return Err(ArgumentError::out_of_range(
                &format!("{name}.length"),
                &format!("<= {MAX_UNIX_NAME} bytes (after any '@')"),
                length,
            ));
        }
        Ok(address)
    }
}

impl fmt::Display for UnixAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnixAddress::Filesystem(path) => write!(f, "{}", path.to_string_lossy()),
            UnixAddress::Abstract(name) => write!(f, "@{}", String::from_utf8_lossy(name)),
        }
    }
}

/// A sockaddr of any family with its significant length, ready for bind, sendmsg or getsockname.
pub struct RawAddress {
    storage: sockaddr_storage,
    len: socklen_t,
}

impl RawAddress {
    /// Room for whatever address the kernel writes (getsockname, getsockopt).
    pub fn empty() -> Self {
        // SAFETY: sockaddr_storage is plain bytes; all-zero is a valid value (AF_UNSPEC).
        RawAddress { storage: unsafe { zeroed() }, len: size_of::<sockaddr_storage>() as socklen_t }
    }

    pub fn from_ip(address: &SocketAddr) -> Self {
        match address {
            SocketAddr::V4(v4) => Self::from_struct(sockaddr_in {
                sin_family: sys::AF_INET as sa_family_t,
                sin_port: v4.port().to_be(),
                sin_addr: v4.ip().octets(),
                sin_zero: [0; 8],
            }),
            SocketAddr::V6(v6) => Self::from_struct(sockaddr_in6 {
                sin6_family: sys::AF_INET6 as sa_family_t,
                sin6_port: v6.port().to_be(),
                sin6_flowinfo: v6.flowinfo(),
                sin6_addr: v6.ip().octets(),
                sin6_scope_id: v6.scope_id(),
            }),
        }
    }

    pub fn from_unix(address: &UnixAddress) -> Self {
        let mut sun = sockaddr_un { sun_family: sys::AF_UNIX as sa_family_t, sun_path: [0; 108] };
        let path_offset = size_of::<sa_family_t>();
        // An abstract name starts after a NUL and its length alone delimits it; a filesystem
        // path is NUL-terminated. parse() bounded both to fit.
        let used = match address {
            UnixAddress::Filesystem(path) => {
                let bytes = path.as_bytes_with_nul();
                sun.sun_path[..bytes.len()].copy_from_slice(bytes);
                bytes.len()
            }
            UnixAddress::Abstract(name) => {
                sun.sun_path[1..=name.len()].copy_from_slice(name);
                name.len() + 1
            }
        };
        let mut raw = Self::from_struct(sun);
        raw.len = (path_offset + used) as socklen_t;
        raw
    }

    fn from_struct<T: Copy>(address: T) -> Self {
        let mut raw = Self::empty();
        const { assert!(size_of::<T>() <= size_of::<sockaddr_storage>()) };
        // SAFETY: T fits in the storage (asserted) and the storage is 8-aligned, enough for any sockaddr.
        unsafe { ptr::write(&mut raw.storage as *mut sockaddr_storage as *mut T, address) };
        raw.len = size_of::<T>() as socklen_t;
        raw
    }

    pub fn family(&self) -> c_int {
        c_int::from(self.storage.ss_family)
    }

    pub fn as_ptr(&self) -> *const c_void {
        &self.storage as *const sockaddr_storage as *const c_void
    }

    pub fn as_mut_ptr(&mut self) -> *mut c_void {
        &mut self.storage as *mut sockaddr_storage as *mut c_void
    }

    pub fn len(&self) -> socklen_t {
        self.len
    }

    pub fn len_mut(&mut self) -> &mut socklen_t {
        &mut self.len
    }

    /// The IP address held, or None for another family.
    pub fn to_ip(&self) -> Option<SocketAddr> {
        let base = &self.storage as *const sockaddr_storage;
        match self.family() {
            sys::AF_INET => {
                // SAFETY: the kernel wrote a sockaddr_in (family says so) into aligned storage.
                let sin = unsafe { ptr::read(base as *const sockaddr_in) };
                let ip = Ipv4Addr::from(sin.sin_addr);
                Some(SocketAddr::V4(SocketAddrV4::new(ip, u16::from_be(sin.sin_port))))
            }
            sys::AF_INET6 => {
                // SAFETY: as above, for sockaddr_in6.
                let sin6 = unsafe { ptr::read(base as *const sockaddr_in6) };
                let ip = Ipv6Addr::from(sin6.sin6_addr);
                let port = u16::from_be(sin6.sin6_port);
                Some(SocketAddr::V6(SocketAddrV6::new(ip, port, sin6.sin6_flowinfo, sin6.sin6_scope_id)))
            }
            _ => None,
        }
    }
}

/// The address a socket is bound to (getsockname).
pub fn local_address(fd: c_int) -> Result<RawAddress, OsError> {
    let mut address = RawAddress::empty();
    // SAFETY: the pointer and length describe `address.storage`.
    sys::check(unsafe { sys::getsockname(fd, address.as_mut_ptr(), address.len_mut()) }, "getsockname", &Fd(fd))?;
    Ok(address)
}
