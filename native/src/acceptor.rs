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

use std::alloc::{self, Layout};
use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::ptr;

use crate::env::{Env, check};
use crate::errno;
use crate::errors::Result;
use crate::napi::*;
use crate::sys;
use crate::unix_dgram;

/// libuv's uv_handle_type for uv_poll_t, and its readable event.
const UV_POLL: c_int = 8;
const UV_READABLE: c_int = 1;
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

type UvPollCb = unsafe extern "C" fn(handle: *mut c_void, status: c_int, events: c_int);
type UvCloseCb = unsafe extern "C" fn(handle: *mut c_void);

unsafe extern "C" {
    fn uv_handle_size(kind: c_int) -> usize;
    fn uv_poll_init(event_loop: *mut c_void, handle: *mut c_void, fd: c_int) -> c_int;
    fn uv_poll_start(handle: *mut c_void, events: c_int, cb: UvPollCb) -> c_int;
    fn uv_poll_stop(handle: *mut c_void) -> c_int;
    fn uv_close(handle: *mut c_void, cb: UvCloseCb);
}

/// Only shared references to an acceptor are ever made: JavaScript, called from on_readable,
/// may resume or close the acceptor it is called for. Its memory outlives any such call (see
/// close).
pub struct Acceptor {
    /// The uv_poll_t; its first word (`data`) points back here.
    handle: *mut c_void,
    layout: Layout,
    fd: c_int,
    source: Source,
    js: JsCallback,
    polling: Cell<bool>,
}

/// What calls JavaScript with a wakeup's harvest, copied out of the acceptor for the call.
#[derive(Clone, Copy)]
struct JsCallback {
    env: napi_env,
    /// callback(fds: number[], code: string | null, errno: number)
    callback: napi_ref,
    context: napi_async_context,
}

impl Acceptor {
    /// Watches `fd` on node's loop and calls `callback` with what each wakeup accepted.
    pub fn start(env: Env, fd: c_int, source: Source, callback: napi_value, name: napi_value) -> Result<*mut Acceptor> {
        set_nonblocking(fd)?;
        let raw = env.raw();
        let mut event_loop = ptr::null_mut();
        // SAFETY: out-pointers are locals; `raw` is the live env of this call.
        check(unsafe { napi_get_uv_event_loop(raw, &mut event_loop) }, "napi_get_uv_event_loop")?;
        let mut reference = ptr::null_mut();
        check(unsafe { napi_create_reference(raw, callback, 1, &mut reference) }, "napi_create_reference")?;
        let mut context = ptr::null_mut();
        check(unsafe { napi_async_init(raw, ptr::null_mut(), name, &mut context) }, "napi_async_init")?;
        // SAFETY: uv_handle_size is a pure query.
        let layout = Layout::from_size_align(unsafe { uv_handle_size(UV_POLL) }, 16).expect("uv_poll_t layout");
        // SAFETY: a non-zero size.
        let handle = unsafe { alloc::alloc_zeroed(layout) }.cast::<c_void>();
        let acceptor = Box::into_raw(Box::new(Acceptor {
            handle,
            layout,
            fd,
            source,
            js: JsCallback { env: raw, callback: reference, context },
            polling: Cell::new(false),
        }));
        // SAFETY: `handle` is a zeroed block of uv_poll_t's size; its first field is `data`.
        unsafe { *handle.cast::<*mut Acceptor>() = acceptor };
        let status = unsafe { uv_poll_init(event_loop.cast(), handle, fd) };
        if status != 0 {
            // SAFETY: libuv did not take the handle, so it is still ours alone.
            unsafe { Box::from_raw(acceptor).release(env) };
            return Err(crate::errors::OsError::new(-status, "uv_poll_init", format!("fd {fd}")).into());
        }
        // SAFETY: the acceptor lives until its handle's close callback.
        if let Err(error) = unsafe { (*acceptor).resume() } {
            // SAFETY: libuv holds the initialized handle: only uv_close gives it back.
            unsafe { Acceptor::close(acceptor, env) };
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
        let status = unsafe { uv_poll_start(self.handle, UV_READABLE, on_readable) };
        if status != 0 {
            return Err(crate::errors::OsError::new(-status, "uv_poll_start", format!("fd {}", self.fd)).into());
        }
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
        let status = unsafe { uv_poll_stop(self.handle) };
        if status != 0 {
            return Err(crate::errors::OsError::new(-status, "uv_poll_stop", format!("fd {}", self.fd)).into());
        }
        self.polling.set(false);
        Ok(())
    }

    /// Stops watching; the listen socket itself stays open (its owner closes it). Frees the
    /// acceptor in uv_close's callback, which libuv runs on a later turn of the loop: never
    /// while on_readable, which may have called the JavaScript that closes it, still runs.
    ///
    /// # Safety
    /// `acceptor` came from start and is closed only once.
    pub unsafe fn close(acceptor: *mut Acceptor, env: Env) {
        unsafe extern "C" fn closed(handle: *mut c_void) {
            // SAFETY: `data` still points at the acceptor, which close left for this callback.
            let acceptor = unsafe { Box::from_raw(*handle.cast::<*mut Acceptor>()) };
            // SAFETY: libuv is done with the handle; it was allocated with this layout.
            unsafe { alloc::dealloc(handle.cast(), acceptor.layout) };
        }
        // SAFETY: per the contract; the references are released on the loop thread, now.
        unsafe {
            let JsCallback { callback, context, .. } = (*acceptor).js;
            napi_delete_reference(env.raw(), callback);
            napi_async_destroy(env.raw(), context);
            uv_close((*acceptor).handle, closed);
        }
    }

    /// Releases what start made when libuv never took the handle.
    unsafe fn release(self, env: Env) {
        // SAFETY: the handle was never registered with libuv.
        unsafe {
            napi_delete_reference(env.raw(), self.js.callback);
            napi_async_destroy(env.raw(), self.js.context);
            alloc::dealloc(self.handle.cast(), self.layout);
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

impl JsCallback {
    fn deliver(self, fds: &[c_int], failure: Option<i32>) -> Result<()> {
        let env = Env::new(self.env);
        let raw = self.env;
        let mut scope = ptr::null_mut();
        // SAFETY: on the loop thread, outside any other call: a scope of our own.
        check(unsafe { napi_open_handle_scope(raw, &mut scope) }, "napi_open_handle_scope")?;
        let result = (|| {
            let mut callback = ptr::null_mut();
            check(unsafe { napi_get_reference_value(raw, self.callback, &mut callback) }, "napi_get_reference_value")?;
            let mut global = ptr::null_mut();
            check(unsafe { napi_get_global(raw, &mut global) }, "napi_get_global")?;
            let args = [
                env.int32_array(fds)?,
                match failure {
                    Some(errno) => env.string(errno::code(errno))?,
                    None => env.null()?,
                },
                env.int32(failure.unwrap_or(0))?,
            ];
            let mut returned = ptr::null_mut();
            // SAFETY: all values belong to the open scope.
            let status = unsafe {
                napi_make_callback(raw, self.context, global, callback, args.len(), args.as_ptr(), &mut returned)
            };
            if status != NAPI_OK {
                // The callback threw: it becomes an uncaught exception, as with any event handler.
                let mut exception = ptr::null_mut();
                if unsafe { napi_get_and_clear_last_exception(raw, &mut exception) } == NAPI_OK && !exception.is_null()
                {
                    unsafe { napi_fatal_exception(raw, exception) };
                }
            }
            Ok(())
        })();
        // SAFETY: the scope opened above.
        unsafe { napi_close_handle_scope(raw, scope) };
        result
    }
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
    let acceptor: *const Acceptor = unsafe { *handle.cast::<*const Acceptor>() };
    let (fds, failure) = if status < 0 { (Vec::new(), Some(-status)) } else { unsafe { (*acceptor).harvest() } };
    if failure.is_some() {
        // The socket stays readable while accept fails: polling on would spin. JavaScript resumes.
        // SAFETY: an active handle.
        unsafe { uv_poll_stop(handle) };
        unsafe { (*acceptor).polling.set(false) };
    }
    // Copied before the call: a close during it releases the callback and the context.
    let js = unsafe { (*acceptor).js };
    if js.deliver(&fds, failure).is_err() {
        // JavaScript cannot take them: the connections go rather than the descriptors leak.
        for fd in fds {
            // SAFETY: descriptors accept4 just returned, owned by no one else.
            unsafe { sys::close(fd) };
        }
    }
}
