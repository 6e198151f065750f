//! Accepting connections on a listen socket here rather than in libuv, which on EMFILE or
//! ENFILE accepts the waiting connections and closes them unreported (its "EMFILE trick"):
//! a proxy out of descriptors shed them with nothing logged and nothing counted. Here a
//! failed accept() is reported to JavaScript with its errno and polling pauses, so the
//! connections wait in the backlog until JavaScript resumes, once descriptors may be free.
//!
//! The socket is watched by a uv_poll handle on node's own loop (node exports libuv to
//! addons); JavaScript hears of each batch through napi_make_callback, on the loop thread.
//!
//! The same handle watches a worker's inbox of connections that another worker accepted and
//! passed on (a listener's exact_balance): there each wakeup receives descriptors instead.

use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::ptr;

use crate::callback::JsCallback;
use crate::env::Env;
use crate::errno;
use crate::errors::Result;
use crate::napi::napi_value;
use crate::sys;
use crate::unix_dgram;
use crate::uv;

/// Connections taken per wakeup, so that one busy listener does not starve the loop. One at a
/// time (nginx's default) spread a shared socket's connections more evenly among the workers,
/// but nearly doubled the CPU a request costs when each request comes on a new connection.
const MAX_ACCEPTS_PER_WAKEUP: usize = 64;

/// How a wakeup takes its connections.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// accept4 on a listen socket.
    Listen,
    /// Descriptors received on a Unix datagram socket, any number a datagram.
    Inbox,
}

/// Only shared references to an acceptor are ever made: JavaScript, called from on_readable,
/// may resume or close the acceptor it is called for. Its memory outlives any such call (see
/// close).
pub struct Acceptor {
    /// The uv_poll_t; its first word (`data`) points back here.
    handle: *mut c_void,
    fd: c_int,
    source: Source,
    /// callback(fds: number[], code: string | null, errno: number)
    js: JsCallback,
    polling: Cell<bool>,
}

impl Acceptor {
    /// Watches `fd` on node's loop and calls `callback` with what each wakeup accepted.
    pub fn start(env: Env, fd: c_int, source: Source, callback: napi_value, name: napi_value) -> Result<*mut Acceptor> {
        set_nonblocking(fd)?;
        let js = JsCallback::new(env, callback, name)?;
        let acceptor =
            Box::into_raw(Box::new(Acceptor { handle: ptr::null_mut(), fd, source, js, polling: Cell::new(false) }));
        match uv::poll_new(env, fd, acceptor.cast()) {
            // SAFETY: made just above, not yet shared.
            Ok(handle) => unsafe { (*acceptor).handle = handle },
            Err(error) => {
                // SAFETY: libuv did not take the handle, so the acceptor is still ours alone.
                let acceptor = unsafe { Box::from_raw(acceptor) };
                unsafe { acceptor.js.release() };
                return Err(error);
            }
        }
        // SAFETY: the acceptor lives until its handle's close callback.
        if let Err(error) = unsafe { (*acceptor).resume() } {
            // SAFETY: libuv holds the initialized handle: only uv_close gives it back.
            unsafe { Acceptor::close(acceptor) };
            return Err(error);
        }
        Ok(acceptor)
    }

    /// Polls again (after a failed accept paused it); nothing when polling already.
    pub fn resume(&self) -> Result<()> {
        if self.polling.get() {
            return Ok(());
        }
        // SAFETY: the handle was initialized in start and is not closed.
        unsafe { uv::poll_watch(self.handle, self.fd, uv::UV_READABLE, on_readable) }?;
        self.polling.set(true);
        Ok(())
    }

    /// Stops polling until resume: new connections wait in the backlog (the overload manager's
    /// stop_accepting_connections). Nothing when not polling.
    pub fn pause(&self) -> Result<()> {
        if !self.polling.get() {
            return Ok(());
        }
        // SAFETY: the handle was initialized in start and is not closed.
        unsafe { uv::poll_watch(self.handle, self.fd, 0, on_readable) }?;
        self.polling.set(false);
        Ok(())
    }

    /// Stops watching; the listen socket itself stays open (its owner closes it). Frees the
    /// acceptor in uv_close's callback, which libuv runs on a later turn of the loop: never
    /// while on_readable, which may have called the JavaScript that closes it, still runs.
    ///
    /// # Safety
    /// `acceptor` came from start and is closed only once.
    pub unsafe fn close(acceptor: *mut Acceptor) {
        unsafe extern "C" fn closed(handle: *mut c_void) {
            // SAFETY: `data` still points at the acceptor, which close left for this callback.
            drop(unsafe { Box::from_raw(uv::poll_owner::<Acceptor>(handle)) });
            // SAFETY: libuv is done with the handle.
            unsafe { uv::poll_free(handle) };
        }
        // SAFETY: per the contract; the callback is released on the loop thread, now.
        unsafe {
            (*acceptor).js.release();
            uv::poll_close((*acceptor).handle, closed);
        }
    }

    /// The wakeup's connections: accepted or received.
    fn harvest(&self) -> (Vec<c_int>, Option<i32>) {
        match self.source {
            Source::Listen => self.accept_batch(),
            Source::Inbox => self.receive_batch(),
        }
    }

    /// accept4 until EAGAIN, a failure or the batch limit: the new descriptors, and the errno
    /// that stopped it if one did.
    fn accept_batch(&self) -> (Vec<c_int>, Option<i32>) {
        let mut fds = Vec::new();
        while fds.len() < MAX_ACCEPTS_PER_WAKEUP {
            let flags = sys::SOCK_NONBLOCK | sys::SOCK_CLOEXEC;
            // SAFETY: plain system call; no address is asked for.
            match sys::check(
                unsafe { sys::accept4(self.fd, ptr::null_mut(), ptr::null_mut(), flags) },
                "accept4",
                &sys::Fd(self.fd),
            ) {
                Ok(fd) => fds.push(fd),
                Err(error) => match error.errno {
                    sys::EAGAIN => break,
                    // The peer gave up while queued, or a signal came: neither concerns the next one.
                    sys::ECONNABORTED | sys::EINTR => continue,
                    errno => return (fds, Some(errno)),
                },
            }
        }
        (fds, None)
    }

    /// Datagrams until none is left, a failure or the batch limit: the descriptors they carried.
    fn receive_batch(&self) -> (Vec<c_int>, Option<i32>) {
        let mut fds = Vec::new();
        while fds.len() < MAX_ACCEPTS_PER_WAKEUP {
            // The datagrams' bytes say nothing: each carries the descriptors of its connections.
            match unix_dgram::receive(self.fd, INBOX_DATAGRAM_BYTES, std::time::Duration::ZERO) {
                Ok(Some(datagram)) => fds.extend(datagram.fds.into_iter().map(std::os::fd::IntoRawFd::into_raw_fd)),
                Ok(None) => break,
                // A datagram no worker sends (its descriptors are closed with it): the next may be whole.
                Err(error) if error.errno == sys::EMSGSIZE => continue,
                Err(error) => return (fds, Some(error.errno)),
            }
        }
        (fds, None)
    }
}

/// The most a datagram to an inbox may hold besides its descriptors.
const INBOX_DATAGRAM_BYTES: usize = 16;

/// Calls JavaScript with a wakeup's harvest.
fn deliver(js: JsCallback, fds: &[c_int], failure: Option<i32>) -> Result<()> {
    js.call(|env| {
        Ok(vec![
            env.int32_array(fds)?,
            match failure {
                Some(errno) => env.string(errno::code(errno))?,
                None => env.null()?,
            },
            env.int32(failure.unwrap_or(0))?,
        ])
    })
}

/// accept_batch stops at EAGAIN, so the socket must not block. uv_poll_init happens to set
/// O_NONBLOCK as well; this does not rely on it. The flag belongs to the file description,
/// which every worker and epoch shares: all of them accept this way.
fn set_nonblocking(fd: c_int) -> Result<()> {
    // SAFETY: plain system calls on a descriptor the caller owns.
    let flags = sys::check(unsafe { sys::fcntl(fd, sys::F_GETFL) }, "fcntl", &sys::Fd(fd))?;
    if flags & sys::O_NONBLOCK == 0 {
        sys::check(unsafe { sys::fcntl(fd, sys::F_SETFL, flags | sys::O_NONBLOCK) }, "fcntl", &sys::Fd(fd))?;
    }
    Ok(())
}

unsafe extern "C" fn on_readable(handle: *mut c_void, status: c_int, _events: c_int) {
    // SAFETY: `data` points at the acceptor, alive until the close callback (see close). Only
    // shared references to it are made, and none outlives a statement: the JavaScript that
    // deliver calls may resume or close it.
    let acceptor: *const Acceptor = unsafe { uv::poll_owner(handle) };
    let (fds, failure) = if status < 0 { (Vec::new(), Some(-status)) } else { unsafe { (*acceptor).harvest() } };
    if failure.is_some() {
        // The socket stays readable while accept fails: polling on would spin. JavaScript resumes.
        // SAFETY: an active handle.
        let _ = unsafe { (*acceptor).pause() };
    }
    // Copied before the call: a close during it releases the callback and the context.
    let js = unsafe { (*acceptor).js };
    if deliver(js, &fds, failure).is_err() {
        // JavaScript cannot take them: the connections go rather than the descriptors leak.
        for fd in fds {
            // SAFETY: descriptors accept4 just returned, owned by no one else.
            unsafe { sys::close(fd) };
        }
    }
}
