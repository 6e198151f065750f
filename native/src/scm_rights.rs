//! SCM_RIGHTS control messages: the ancillary data that carries file descriptors over a Unix
//! socket (cmsg(3); CMSG_SPACE and friends are macros, so their arithmetic is spelled out here).

use std::ffi::c_int;
use std::mem::{size_of, size_of_val};
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::ptr;

use crate::sys::{self, cmsghdr};

const HEADER: usize = size_of::<cmsghdr>();

/// CMSG_ALIGN: control messages start on `size_t` boundaries.
const fn align(len: usize) -> usize {
    (len + size_of::<usize>() - 1) & !(size_of::<usize>() - 1)
}

/// CMSG_SPACE for `count` descriptors.
const fn space(count: usize) -> usize {
    HEADER + align(count * size_of::<c_int>())
}

/// Control-message bytes, kept in u64 words so that the cmsghdr at their start is aligned.
pub struct ControlBuffer {
    words: Vec<u64>,
    len: usize,
}

impl ControlBuffer {
    /// Room for one message carrying up to SCM_MAX_FD descriptors, for recvmsg.
    pub fn for_receiving() -> Self {
        Self::zeroed(space(sys::SCM_MAX_FD))
    }

    /// One SCM_RIGHTS message carrying `fds` (an empty buffer when there are none).
    pub fn carrying(fds: &[RawFd]) -> Self {
        if fds.is_empty() {
            return Self::zeroed(0);
        }
        let mut buffer = Self::zeroed(space(fds.len()));
        let header =
            cmsghdr { cmsg_len: HEADER + size_of_val(fds), cmsg_level: sys::SOL_SOCKET, cmsg_type: sys::SCM_RIGHTS };
        let base = buffer.words.as_mut_ptr() as *mut u8;
        // SAFETY: space() reserved the header and the descriptors; the base is 8-aligned.
        unsafe {
            ptr::write(base as *mut cmsghdr, header);
            ptr::copy_nonoverlapping(fds.as_ptr(), base.add(HEADER) as *mut c_int, fds.len());
        }
        buffer
    }

    fn zeroed(len: usize) -> Self {
        ControlBuffer { words: vec![0; len.div_ceil(size_of::<u64>())], len }
    }

    /// msg_control: null when empty, as sendmsg expects when there is no ancillary data.
    pub fn as_mut_ptr(&mut self) -> *mut std::ffi::c_void {
        if self.len == 0 { ptr::null_mut() } else { self.words.as_mut_ptr().cast() }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Takes ownership of the descriptors in the first `received` bytes, as recvmsg filled them.
    pub fn into_descriptors(self, received: usize) -> Vec<OwnedFd> {
        let received = received.min(self.len);
        let base = self.words.as_ptr() as *const u8;
        let mut fds = Vec::new();
        let mut offset = 0;
        while offset + HEADER <= received {
            // SAFETY: in bounds (checked) and 8-aligned (offsets advance by align()).
            let header = unsafe { ptr::read(base.add(offset) as *const cmsghdr) };
            if header.cmsg_len < HEADER || offset + header.cmsg_len > received {
                break;
            }
            if header.cmsg_level == sys::SOL_SOCKET && header.cmsg_type == sys::SCM_RIGHTS {
                let count = (header.cmsg_len - HEADER) / size_of::<c_int>();
                for index in 0..count {
                    // SAFETY: within this message (cmsg_len was bounds-checked above).
                    let fd = unsafe {
                        ptr::read_unaligned(base.add(offset + HEADER + index * size_of::<c_int>()) as *const c_int)
                    };
                    // SAFETY: the kernel installed this descriptor for us alone.
                    fds.push(unsafe { OwnedFd::from_raw_fd(fd) });
                }
            }
            offset += align(header.cmsg_len);
        }
        fds
    }
}
