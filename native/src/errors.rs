//! The failures a binding can report, before they become JavaScript exceptions (see js.rs).

use std::fmt;
use std::io;

use crate::errno;
use crate::napi::napi_status;

pub type Result<T> = std::result::Result<T, Error>;

#[derive(Debug)]
pub enum Error {
    /// A system call failed; JavaScript sees an Error with `errno`, `code` and `syscall`.
    Os(OsError),
    /// A JavaScript argument is unusable; JavaScript sees a TypeError or RangeError.
    Argument(ArgumentError),
    /// An N-API call failed; a JavaScript exception is usually pending already.
    Napi { call: &'static str, status: napi_status },
    /// A Rust panic, caught before it could unwind into node.
    Panic(String),
}

/// A failed system call: which call, on what (a name, a path, an address or "fd N"), and errno.
#[derive(Debug)]
pub struct OsError {
    pub errno: i32,
    pub syscall: &'static str,
    pub target: String,
}

impl OsError {
    pub fn new(errno: i32, syscall: &'static str, target: impl Into<String>) -> Self {
        OsError { errno, syscall, target: target.into() }
    }

    /// The error of the system call that just returned -1.
    pub fn last(syscall: &'static str, target: impl Into<String>) -> Self {
        Self::from_io(&io::Error::last_os_error(), syscall, target)
    }

    pub fn from_io(error: &io::Error, syscall: &'static str, target: impl Into<String>) -> Self {
        // std reports its own failures (e.g. a path with NUL) without an errno: EINVAL fits them.
        const EINVAL: i32 = 22;
        Self::new(error.raw_os_error().unwrap_or(EINVAL), syscall, target)
    }

    pub fn code(&self) -> &'static str {
        errno::code(self.errno)
    }
}

impl fmt::Display for OsError {
    /// `shm_open(/proxy_shared_memory_0): File exists (EEXIST)`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({}): {} ({})", self.syscall, self.target, errno::description(self.errno), self.code())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgumentErrorKind {
    /// TypeError ERR_INVALID_ARG_TYPE: not even the right JavaScript type.
    Type,
    /// TypeError ERR_INVALID_ARG_VALUE: the right type, but unusable (a NUL in a path, a bad address).
    Value,
    /// RangeError ERR_OUT_OF_RANGE: a number outside what the call accepts.
    Range,
}

/// Messages follow Node's own argument errors so that they read the same to an operator.
#[derive(Debug)]
pub struct ArgumentError {
    pub kind: ArgumentErrorKind,
    pub message: String,
}

impl ArgumentError {
    pub fn invalid_type(name: &str, expected: &str, received: &str) -> Self {
        ArgumentError {
            kind: ArgumentErrorKind::Type,
            message: format!("The \"{name}\" argument must be {expected}. Received {received}"),
        }
    }

    pub fn invalid_value(name: &str, reason: &str, received: &str) -> Self {
        ArgumentError {
            kind: ArgumentErrorKind::Value,
            message: format!("The \"{name}\" argument {reason}. Received {received}"),
        }
    }

    pub fn out_of_range(name: &str, expected: &str, received: impl fmt::Display) -> Self {
        ArgumentError {
            kind: ArgumentErrorKind::Range,
            message: format!("The value of \"{name}\" is out of range. It must be {expected}. Received {received}"),
        }
    }

    pub fn code(&self) -> &'static str {
        match self.kind {
            ArgumentErrorKind::Type => "ERR_INVALID_ARG_TYPE",
            ArgumentErrorKind::Value => "ERR_INVALID_ARG_VALUE",
            ArgumentErrorKind::Range => "ERR_OUT_OF_RANGE",
        }
    }
}

impl From<OsError> for Error {
    fn from(error: OsError) -> Self {
        Error::Os(error)
    }
}

impl From<ArgumentError> for Error {
    fn from(error: ArgumentError) -> Self {
        Error::Argument(error)
    }
}
