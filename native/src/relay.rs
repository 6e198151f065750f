//! Moves bytes both ways between two connected TCP sockets without JavaScript: tcp_proxy's
//! steady state. Each read is written to the other socket in the same callback; what the peer
//! does not take waits here, and a side whose bytes wait beyond the limit is not read until
//! they drain to half of it (Envoy's watermarks). The statistics a JavaScript write or read
//! would count are counted here, into the same shared-memory cells.
//!
//! The relay polls duplicates of the descriptors, so that the sockets node holds stay open and
//! usable whatever happens here: the first end of stream or error on either side stops the
//! relay, and JavaScript, told which, takes the unsent bytes back and carries on as before.

use std::ffi::{c_int, c_void};
use std::mem::MaybeUninit;
use std::ptr;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::callback::JsCallback;
use crate::env::{Env, check};
use crate::errors::{OsError, Result};
use crate::napi::*;
use crate::send::send;
use crate::sys::{self, Fd};
use crate::uv;

/// The downstream side, then the upstream side; a flow is named for the side it reads.
pub const SIDES: usize = 2;
/// The most one read takes, as node's own reads.
const READ_BYTES: usize = 64 * 1024;
/// Reads per wakeup that fill the buffer: more would let one fast sender starve the loop.
const READS_PER_WAKEUP: usize = 4;

/// The statistics cells of one flow, in this order.
pub const FLOW_CELLS: usize = 5;
/// Bytes read from the source (its rx counter).
const RX: usize = 0;
/// Bytes written to the destination (its tx counter).
const TX: usize = 1;
/// Bytes read and not yet written (the destination's tx buffered gauge).
const BUFFERED: usize = 2;
/// Times the source stopped being read (its flow control paused counter).
const PAUSED: usize = 3;
/// Times it was read again.
const RESUMED: usize = 4;

/// The relay's own figures, in a Float64Array JavaScript reads: bytes read from each side,
/// and when bytes last moved (milliseconds since the epoch, as Date.now()).
pub const STATE_CELLS: usize = 3;
const LAST_ACTIVITY: usize = 2;

/// What one flow has read and not yet written, and its limit.
struct Flow {
    pending: Vec<u8>,
    /// Bytes of `pending` already written.
    sent: usize,
    /// Above this many waiting bytes the source is not read (usize::MAX: no limit)...
    high: usize,
    /// ...until they are down to this many.
    low: usize,
    above: bool,
    cells: [*mut f64; FLOW_CELLS],
}

impl Flow {
    fn waiting(&self) -> usize {
        self.pending.len() - self.sent
    }

    /// SAFETY of every cell write: the cells are f64 slots of typed arrays the relay holds
    /// references to, written only on the loop thread, as JavaScript writes them.
    fn add(&self, cell: usize, amount: f64) {
        unsafe { *self.cells[cell] += amount };
    }
}

/// Why the relay stopped: the side, and 0 for its end of stream or the errno that failed it.
#[derive(Clone, Copy)]
struct Stop {
    side: usize,
    errno: i32,
}

pub struct Relay {
    /// Each side's uv_poll_t, over `fds`; their `data` points back here.
    handles: [*mut c_void; SIDES],
    /// Duplicates of the sockets' descriptors, closed with the relay.
    fds: [c_int; SIDES],
    /// The events each handle watches now.
    watching: [c_int; SIDES],
    flows: [Flow; SIDES],
    state: *mut f64,
    /// The typed arrays the cells and the state live in, kept alive while the relay writes them.
    arrays: Vec<napi_ref>,
    /// onStop(side: number, errno: number)
    js: JsCallback,
    stopped: bool,
    /// Handles whose close callback has not run; the last one frees the relay.
    open_handles: usize,
}

/// Where a figure lives: a Float64Array, and the address of its element.
pub struct StatCell {
    pub array: napi_value,
    pub data: *mut f64,
}

impl Relay {
    /// Relays between the sockets `fds` (downstream, upstream), which stay open and owned by
    /// the caller. `limits`: each flow's buffer limit (0: none); `cells`: each flow's five
    /// statistics; `state`: the relay's figures (STATE_CELLS).
    pub fn start(
        env: Env,
        fds: [c_int; SIDES],
        limits: [usize; SIDES],
        cells: [[StatCell; FLOW_CELLS]; SIDES],
        state: StatCell,
        on_stop: napi_value,
        name: napi_value,
    ) -> Result<*mut Relay> {
        let js = JsCallback::new(env, on_stop, name)?;
        let flow = |limit: usize, cells: &[StatCell; FLOW_CELLS]| Flow {
            pending: Vec::new(),
            sent: 0,
            high: if limit == 0 { usize::MAX } else { limit },
            low: if limit == 0 { usize::MAX } else { limit / 2 },
            above: false,
            cells: [cells[0].data, cells[1].data, cells[2].data, cells[3].data, cells[4].data],
        };
        let relay = Box::into_raw(Box::new(Relay {
            handles: [ptr::null_mut(); SIDES],
            fds: [-1; SIDES],
            watching: [0; SIDES],
            flows: [flow(limits[0], &cells[0]), flow(limits[1], &cells[1])],
            state: state.data,
            arrays: Vec::with_capacity(SIDES * FLOW_CELLS + 1),
            js,
            stopped: false,
            open_handles: 0,
        }));
        // SAFETY: made just above and not shared until start returns; on failure close takes
        // back what was set up.
        let this = unsafe { &mut *relay };
        let setup = (|| {
            for array in cells.iter().flatten().map(|cell| cell.array).chain([state.array]) {
                let mut reference = ptr::null_mut();
                check(unsafe { napi_create_reference(env.raw(), array, 1, &mut reference) }, "napi_create_reference")?;
                this.arrays.push(reference);
            }
            for (side, &original) in fds.iter().enumerate() {
                let fd = sys::check(unsafe { sys::fcntl(original, sys::F_DUPFD_CLOEXEC, 0) }, "fcntl", &Fd(original))?;
                this.fds[side] = fd;
                this.handles[side] = uv::poll_new(env, fd, relay.cast())?;
                this.open_handles += 1;
            }
            this.watch()
        })();
        match setup {
            Ok(()) => Ok(relay),
            Err(error) => {
                // SAFETY: not handed out; closed once.
                unsafe { Relay::close(relay, env) };
                Err(error)
            }
        }
    }

    /// Stops relaying and lets go of the duplicates; the relay itself is freed once libuv has
    /// closed its handles. Returns each flow's unsent bytes, which leave the buffered gauges,
    /// and a source held back by its limit counts as read again (JavaScript reads it now).
    ///
    /// # Safety
    /// `relay` came from start and is closed once, on the loop thread.
    pub unsafe fn close(relay: *mut Relay, env: Env) -> [Vec<u8>; SIDES] {
        unsafe extern "C" fn closed(handle: *mut c_void) {
            // SAFETY: `data` points at the relay, which close left for its handles' callbacks.
            let relay = unsafe { uv::poll_owner::<Relay>(handle) };
            unsafe { uv::poll_free(handle) };
            unsafe {
                (*relay).open_handles -= 1;
                if (*relay).open_handles == 0 {
                    drop(Box::from_raw(relay));
                }
            }
        }
        // SAFETY: per the contract, no other reference to the relay is live.
        let this = unsafe { &mut *relay };
        this.stopped = true;
        let unsent = this.flows.each_mut().map(|flow| {
            flow.add(BUFFERED, -(flow.waiting() as f64));
            if flow.above {
                flow.add(RESUMED, 1.0);
            }
            let mut pending = std::mem::take(&mut flow.pending);
            pending.drain(..flow.sent);
            pending
        });
        for reference in this.arrays.drain(..) {
            // SAFETY: references made in start, on this thread.
            unsafe { napi_delete_reference(env.raw(), reference) };
        }
        // SAFETY: released once, here.
        unsafe { this.js.release() };
        let handles = this.handles;
        let fds = this.fds;
        let open = this.open_handles;
        for side in 0..SIDES {
            if !handles[side].is_null() {
                // SAFETY: an initialized handle, closed once; libuv stops polling at once, so
                // the descriptor can go now.
                unsafe { uv::poll_close(handles[side], closed) };
            }
            if fds[side] >= 0 {
                // SAFETY: our own duplicate.
                unsafe { sys::close(fds[side]) };
            }
        }
        if open == 0 {
            // SAFETY: no handle refers to it.
            drop(unsafe { Box::from_raw(relay) });
        }
        unsent
    }

    /// Reads `side` and writes what it read to the other side.
    fn pump(&mut self, side: usize) -> Option<Stop> {
        let peer = 1 - side;
        let mut buffer = MaybeUninit::<[u8; READ_BYTES]>::uninit();
        let base = buffer.as_mut_ptr().cast::<u8>();
        for _ in 0..READS_PER_WAKEUP {
            if self.flows[side].above {
                return None;
            }
            // SAFETY: reads into our stack buffer, at most its size.
            let read = unsafe { sys::read(self.fds[side], base.cast(), READ_BYTES) };
            if read == 0 {
                return Some(Stop { side, errno: 0 });
            }
            if read < 0 {
                return match last_errno() {
                    sys::EAGAIN => None,
                    sys::EINTR => continue,
                    errno => Some(Stop { side, errno }),
                };
            }
            let read = read as usize;
            // SAFETY: the kernel wrote `read` bytes there.
            let bytes = unsafe { std::slice::from_raw_parts(base, read) };
            self.touch();
            unsafe { *self.state.add(side) += read as f64 };
            let flow = &mut self.flows[side];
            flow.add(RX, read as f64);
            let mut written = 0;
            if flow.waiting() == 0 {
                match send(self.fds[peer], &[bytes]) {
                    Ok(sent) => written = sent,
                    Err(errno) => return Some(Stop { side: peer, errno }),
                }
                flow.add(TX, written as f64);
            }
            if written < read {
                flow.pending.extend_from_slice(&bytes[written..]);
                flow.add(BUFFERED, (read - written) as f64);
                if flow.waiting() > flow.high {
                    flow.above = true;
                    flow.add(PAUSED, 1.0);
                }
            }
            if read < READ_BYTES {
                return None;
            }
        }
        None
    }

    /// Writes what waits for `side`.
    fn drain(&mut self, side: usize) -> Option<Stop> {
        let flow = &mut self.flows[1 - side];
        while flow.waiting() > 0 {
            match send(self.fds[side], &[&flow.pending[flow.sent..]]) {
                Ok(0) => break,
                Ok(sent) => {
                    flow.sent += sent;
                    flow.add(TX, sent as f64);
                    flow.add(BUFFERED, -(sent as f64));
                }
                Err(errno) => return Some(Stop { side, errno }),
            }
        }
        if flow.waiting() == 0 {
            flow.pending.clear();
            flow.sent = 0;
        } else if flow.sent > flow.pending.len() / 2 {
            flow.pending.drain(..flow.sent);
            flow.sent = 0;
        }
        if flow.above && flow.waiting() <= flow.low {
            flow.above = false;
            flow.add(RESUMED, 1.0);
        }
        self.touch();
        None
    }

    fn touch(&self) {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |since| since.as_millis() as f64);
        unsafe { *self.state.add(LAST_ACTIVITY) = now };
    }

    /// Each side is read unless its flow is held back, and written while bytes wait for it.
    fn watch(&mut self) -> Result<()> {
        for side in 0..SIDES {
            let mut events = 0;
            if !self.stopped && !self.flows[side].above {
                events |= uv::UV_READABLE;
            }
            if !self.stopped && self.flows[1 - side].waiting() > 0 {
                events |= uv::UV_WRITABLE;
            }
            if events != self.watching[side] {
                // SAFETY: an initialized handle, not closed while the relay runs.
                unsafe { uv::poll_watch(self.handles[side], self.fds[side], events, on_ready) }?;
                self.watching[side] = events;
            }
        }
        Ok(())
    }
}

/// The socket's pending error (SO_ERROR), if it has one.
fn pending_error(fd: c_int) -> Option<i32> {
    let mut error: c_int = 0;
    let mut len = std::mem::size_of::<c_int>() as sys::socklen_t;
    // SAFETY: the pointer and length describe `error`.
    let ret =
        unsafe { sys::getsockopt(fd, sys::SOL_SOCKET, sys::SO_ERROR, (&mut error as *mut c_int).cast(), &mut len) };
    if ret == 0 && error != 0 { Some(error) } else { None }
}

fn last_errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

unsafe extern "C" fn on_ready(handle: *mut c_void, status: c_int, events: c_int) {
    // SAFETY: `data` points at the relay, alive until its handles' close callbacks; no other
    // reference to it is live in a libuv callback. The borrow ends before JavaScript is called,
    // which may close the relay.
    let relay = unsafe { uv::poll_owner::<Relay>(handle) };
    let (stop, js) = {
        let this = unsafe { &mut *relay };
        if this.stopped {
            return;
        }
        let side = if handle == this.handles[0] { 0 } else { 1 };
        let mut stop = None;
        if status < 0 {
            // libuv reports a socket's error condition (a reset) as EBADF: the read that follows
            // forwards what came before it and meets the error itself.
            stop =
                Some(this.pump(side).unwrap_or(Stop { side, errno: pending_error(this.fds[side]).unwrap_or(-status) }));
        }
        if stop.is_none() && events & uv::UV_WRITABLE != 0 {
            stop = this.drain(side);
        }
        if stop.is_none() && events & uv::UV_READABLE != 0 {
            stop = this.pump(side);
        }
        if stop.is_some() {
            this.stopped = true;
        }
        if let Err(error) = this.watch() {
            let errno = match error {
                crate::errors::Error::Os(OsError { errno, .. }) => errno,
                _ => sys::EIO,
            };
            stop = stop.or(Some(Stop { side, errno }));
            this.stopped = true;
        }
        (stop, this.js)
    };
    if let Some(Stop { side, errno }) = stop {
        // A failed call leaves an exception pending that node reports; nothing more to do here.
        let _ = js.call(|env| Ok(vec![env.int32(side as i32)?, env.int32(errno)?]));
    }
}
