//! errno values as the symbolic codes Node uses (`EADDRINUSE`, ...) and as libc's text.

use std::ffi::{CStr, c_char, c_int};

/// Linux x86_64 errno names, indexed by errno. Aliases take Node's spelling: 11 is EAGAIN
/// (never EWOULDBLOCK), 35 EDEADLK, 95 EOPNOTSUPP (ENOTSUP); 41 and 58 are unassigned.
#[rustfmt::skip]
const NAMES: [&str; 134] = [
    "", "EPERM", "ENOENT", "ESRCH", "EINTR", "EIO", "ENXIO", "E2BIG",
    "ENOEXEC", "EBADF", "ECHILD", "EAGAIN", "ENOMEM", "EACCES", "EFAULT", "ENOTBLK",
    "EBUSY", "EEXIST", "EXDEV", "ENODEV", "ENOTDIR", "EISDIR", "EINVAL", "ENFILE",
    "EMFILE", "ENOTTY", "ETXTBSY", "EFBIG", "ENOSPC", "ESPIPE", "EROFS", "EMLINK",
    "EPIPE", "EDOM", "ERANGE", "EDEADLK", "ENAMETOOLONG", "ENOLCK", "ENOSYS", "ENOTEMPTY",
    "ELOOP", "", "ENOMSG", "EIDRM", "ECHRNG", "EL2NSYNC", "EL3HLT", "EL3RST",
    "ELNRNG", "EUNATCH", "ENOCSI", "EL2HLT", "EBADE", "EBADR", "EXFULL", "ENOANO",
    "EBADRQC", "EBADSLT", "", "EBFONT", "ENOSTR", "ENODATA", "ETIME", "ENOSR",
    "ENONET", "ENOPKG", "EREMOTE", "ENOLINK", "EADV", "ESRMNT", "ECOMM", "EPROTO",
    "EMULTIHOP", "EDOTDOT", "EBADMSG", "EOVERFLOW", "ENOTUNIQ", "EBADFD", "EREMCHG", "ELIBACC",
    "ELIBBAD", "ELIBSCN", "ELIBMAX", "ELIBEXEC", "EILSEQ", "ERESTART", "ESTRPIPE", "EUSERS",
    "ENOTSOCK", "EDESTADDRREQ", "EMSGSIZE", "EPROTOTYPE", "ENOPROTOOPT", "EPROTONOSUPPORT", "ESOCKTNOSUPPORT", "EOPNOTSUPP",
    "EPFNOSUPPORT", "EAFNOSUPPORT", "EADDRINUSE", "EADDRNOTAVAIL", "ENETDOWN", "ENETUNREACH", "ENETRESET", "ECONNABORTED",
    "ECONNRESET", "ENOBUFS", "EISCONN", "ENOTCONN", "ESHUTDOWN", "ETOOMANYREFS", "ETIMEDOUT", "ECONNREFUSED",
    "EHOSTDOWN", "EHOSTUNREACH", "EALREADY", "EINPROGRESS", "ESTALE", "EUCLEAN", "ENOTNAM", "ENAVAIL",
    "EISNAM", "EREMOTEIO", "EDQUOT", "ENOMEDIUM", "EMEDIUMTYPE", "ECANCELED", "ENOKEY", "EKEYEXPIRED",
    "EKEYREVOKED", "EKEYREJECTED", "EOWNERDEAD", "ENOTRECOVERABLE", "ERFKILL", "EHWPOISON",
];

unsafe extern "C" {
    // The XSI strerror_r (fills the buffer); glibc's plain `strerror_r` symbol is the GNU variant.
    #[link_name = "__xpg_strerror_r"]
    fn strerror_r(errnum: c_int, buf: *mut c_char, buflen: usize) -> c_int;
}

/// The symbolic code of `errno`, or "UNKNOWN" (libuv's word) for a value Linux does not assign.
pub fn code(errno: i32) -> &'static str {
    usize::try_from(errno)
        .ok()
        .and_then(|index| NAMES.get(index))
        .filter(|name| !name.is_empty())
        .copied()
        .unwrap_or("UNKNOWN")
}

/// libc's description of `errno`, e.g. "File exists".
pub fn description(errno: i32) -> String {
    let mut buf = [0 as c_char; 256];
    // SAFETY: the buffer and its length match; strerror_r NUL-terminates on success.
    let status = unsafe { strerror_r(errno, buf.as_mut_ptr(), buf.len()) };
    if status != 0 {
        return format!("Unknown error {errno}");
    }
    // SAFETY: NUL-terminated by strerror_r above.
    unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned()
}
