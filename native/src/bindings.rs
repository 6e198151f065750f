//! The functions JavaScript sees: each reads and validates its arguments, calls the module that
//! does the work and builds the JavaScript result. Descriptors are released to JavaScript only
//! once the result is complete, so that a failure on the way closes them instead of leaking.

use std::ffi::{CStr, OsStr};
use std::mem::MaybeUninit;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::Duration;

use crate::acceptor::{Acceptor, Source};
use crate::call::{Body, Call};
use crate::env::Env;
use crate::errors::{ArgumentError, Result};
use crate::napi::napi_value;
use crate::relay::{FLOW_CELLS, Relay, SIDES, STATE_CELLS, StatCell};
use crate::sockaddr::UnixAddress;
use crate::{fd, keepalive, listen, lock, original_dst, process, send, shm, sockaddr, sys, unix_dgram};

const FUNCTIONS: &[(&CStr, Body)] = &[
    (c"shmCreate", shm_create),
    (c"shmOpen", shm_open),
    (c"shmUnlink", shm_unlink),
    (c"listenTcp", listen_tcp),
    (c"closeFd", close_fd),
    (c"unixDgramBind", unix_dgram_bind),
    (c"unixDgramSocket", unix_dgram_socket),
    (c"unixDgramSend", unix_dgram_send),
    (c"unixDgramRecv", unix_dgram_recv),
    (c"lockFile", lock_file),
    (c"unlockFile", unlock_file),
    (c"getOriginalDst", get_original_dst),
    (c"setParentDeathSignal", set_parent_death_signal),
    (c"setTcpKeepalive", set_tcp_keepalive),
    (c"getTcpKeepalive", get_tcp_keepalive),
    (c"acceptorStart", acceptor_start),
    (c"inboxStart", inbox_start),
    (c"acceptorResume", acceptor_resume),
    (c"acceptorPause", acceptor_pause),
    (c"acceptorClose", acceptor_close),
    (c"localAddress", local_address),
    (c"relayStart", relay_start),
    (c"relayClose", relay_close),
    (c"socketSend", socket_send),
    (c"releaseFreeMemory", release_free_memory),
];

/// Largest integer a JavaScript number holds exactly.
const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;
const MAX_INT32: i64 = i32::MAX as i64;

pub fn export(env: Env, exports: napi_value) -> Result<()> {
    for &(name, body) in FUNCTIONS {
        env.set_property(exports, name, env.function(name, body)?)?;
    }
    Ok(())
}

fn descriptor(call: &Call, index: usize) -> Result<i32> {
    Ok(call.integer(index, "fd", 0, MAX_INT32)? as i32)
}

fn unix_address(call: &Call, index: usize, name: &str) -> Result<UnixAddress> {
    Ok(UnixAddress::parse(name, call.string(index, name)?)?)
}

/// shmCreate(name: string, size: number, holdLock: boolean): ArrayBuffer
fn shm_create(call: &Call) -> Result<napi_value> {
    let name = call.c_string(0, "name")?;
    let size = call.integer(1, "size", 1, MAX_SAFE_INTEGER)? as usize;
    let hold_lock = call.boolean(2, "holdLock")?;
    call.env.mapped_arraybuffer(shm::create(&name, size, hold_lock)?)
}

/// shmOpen(name: string): ArrayBuffer
fn shm_open(call: &Call) -> Result<napi_value> {
    let name = call.c_string(0, "name")?;
    call.env.mapped_arraybuffer(shm::open(&name)?)
}

/// shmUnlink(name: string): void
fn shm_unlink(call: &Call) -> Result<napi_value> {
    shm::unlink(&call.c_string(0, "name")?)?;
    call.env.undefined()
}

/// listenTcp(address: string, port: number, backlog: number, reusePort: boolean): { fd: number; port: number }
fn listen_tcp(call: &Call) -> Result<napi_value> {
    let address = call.string(0, "address")?;
    let ip: IpAddr = address.parse().map_err(|_| {
        ArgumentError::invalid_value("address", "must be an IPv4 or IPv6 address", &format!("{address:?}"))
    })?;
    let port = call.integer(1, "port", 0, u16::MAX.into())? as u16;
    let backlog = call.integer(2, "backlog", 0, MAX_INT32)? as i32;
    let reuse_port = call.boolean(3, "reusePort")?;

    let listener = listen::listen_tcp(SocketAddr::new(ip, port), backlog, reuse_port)?;
    let env = call.env;
    let result =
        env.object(&[(c"fd", env.int32(listener.fd.as_raw_fd())?), (c"port", env.int32(listener.port.into())?)])?;
    fd::release(listener.fd);
    Ok(result)
}

/// closeFd(fd: number): void
fn close_fd(call: &Call) -> Result<napi_value> {
    fd::close(descriptor(call, 0)?)?;
    call.env.undefined()
}

/// unixDgramBind(path: string): number
fn unix_dgram_bind(call: &Call) -> Result<napi_value> {
    let socket = unix_dgram::bind(&unix_address(call, 0, "path")?)?;
    let result = call.env.int32(socket.as_raw_fd())?;
    fd::release(socket);
    Ok(result)
}

/// unixDgramSocket(): number
fn unix_dgram_socket(call: &Call) -> Result<napi_value> {
    let socket = unix_dgram::unbound()?;
    let result = call.env.int32(socket.as_raw_fd())?;
    fd::release(socket);
    Ok(result)
}

/// unixDgramSend(fd: number, destPath: string, data: Buffer, fds: number[]): void
fn unix_dgram_send(call: &Call) -> Result<napi_value> {
    let socket = descriptor(call, 0)?;
    let destination = unix_address(call, 1, "destPath")?;
    let data = call.bytes(2, "data")?;
    let fds: Vec<i32> = call.integers(3, "fds", 0, MAX_INT32)?.into_iter().map(|fd| fd as i32).collect();
    if fds.len() > sys::SCM_MAX_FD {
        return Err(ArgumentError::out_of_range("fds.length", &format!("<= {}", sys::SCM_MAX_FD), fds.len()).into());
    }
    unix_dgram::send(socket, &destination, data, &fds)?;
    call.env.undefined()
}

/// unixDgramRecv(fd: number, maxBytes: number, timeoutMs: number): { data: Buffer; fds: number[] } | null
fn unix_dgram_recv(call: &Call) -> Result<napi_value> {
    let socket = descriptor(call, 0)?;
    let max_bytes = call.integer(1, "maxBytes", 0, MAX_INT32)? as usize;
    let timeout = Duration::from_millis(call.integer(2, "timeoutMs", 0, MAX_INT32)? as u64);
    let env = call.env;
    let Some(datagram) = unix_dgram::receive(socket, max_bytes, timeout)? else {
        return env.null();
    };
    let raw_fds: Vec<i32> = datagram.fds.iter().map(|fd| fd.as_raw_fd()).collect();
    let result = env.object(&[(c"data", env.buffer(&datagram.data)?), (c"fds", env.int32_array(&raw_fds)?)])?;
    for received in datagram.fds {
        fd::release(received);
    }
    Ok(result)
}

/// lockFile(path: string, wait: boolean): number
fn lock_file(call: &Call) -> Result<napi_value> {
    let path = call.c_string(0, "path")?;
    let wait = call.boolean(1, "wait")?;
    let held = lock::lock(Path::new(OsStr::from_bytes(path.as_bytes())), wait)?;
    let result = call.env.int32(held.as_raw_fd())?;
    fd::release(held);
    Ok(result)
}

/// unlockFile(fd: number): void
fn unlock_file(call: &Call) -> Result<napi_value> {
    lock::unlock(descriptor(call, 0)?)?;
    call.env.undefined()
}

/// getOriginalDst(fd: number): { address: string; port: number } | null
fn get_original_dst(call: &Call) -> Result<napi_value> {
    let env = call.env;
    match original_dst::original_destination(descriptor(call, 0)?)? {
        Some(destination) => env.object(&[
            (c"address", env.string(&destination.ip().to_string())?),
            (c"port", env.int32(destination.port().into())?),
        ]),
        None => env.null(),
    }
}

/// setParentDeathSignal(signal: number): void
fn set_parent_death_signal(call: &Call) -> Result<napi_value> {
    process::set_parent_death_signal(call.integer(0, "signal", 1, 64)? as i32)?;
    call.env.undefined()
}

/// An optional keepalive knob: 0 leaves the system default (the kernel refuses 0 anyway).
fn keepalive_knob(call: &Call, index: usize, name: &str) -> Result<Option<i32>> {
    let value = call.integer(index, name, 0, MAX_INT32)? as i32;
    Ok(if value == 0 { None } else { Some(value) })
}

/// setTcpKeepalive(fd: number, probes: number, timeS: number, intervalS: number): void
fn set_tcp_keepalive(call: &Call) -> Result<napi_value> {
    let settings = keepalive::Keepalive {
        probes: keepalive_knob(call, 1, "probes")?,
        time_s: keepalive_knob(call, 2, "timeS")?,
        interval_s: keepalive_knob(call, 3, "intervalS")?,
    };
    keepalive::set(descriptor(call, 0)?, &settings)?;
    call.env.undefined()
}

/// getTcpKeepalive(fd: number): { enabled: boolean; probes: number; timeS: number; intervalS: number }
fn get_tcp_keepalive(call: &Call) -> Result<napi_value> {
    let settings = keepalive::get(descriptor(call, 0)?)?;
    let env = call.env;
    env.object(&[
        (c"enabled", env.boolean(settings.enabled)?),
        (c"probes", env.int32(settings.probes)?),
        (c"timeS", env.int32(settings.time_s)?),
        (c"intervalS", env.int32(settings.interval_s)?),
    ])
}

/// acceptorStart(fd: number, onAccepted: (fds: number[], code: string | null, errno: number) => void): external
fn acceptor_start(call: &Call) -> Result<napi_value> {
    start_acceptor(call, Source::Listen, "ProxyAcceptor")
}

/// inboxStart(fd: number, onReceived: (fds: number[], code: string | null, errno: number) => void): external,
/// an acceptor of the connections passed to the Unix datagram socket `fd`
fn inbox_start(call: &Call) -> Result<napi_value> {
    start_acceptor(call, Source::Inbox, "ProxyConnectionInbox")
}

fn start_acceptor(call: &Call, source: Source, name: &str) -> Result<napi_value> {
    let fd = descriptor(call, 0)?;
    let callback = call.function(1, "onAccepted")?;
    let acceptor = Acceptor::start(call.env, fd, source, callback, call.env.string(name)?)?;
    match call.env.external(acceptor.cast()) {
        Ok(external) => Ok(external),
        Err(error) => {
            // SAFETY: just started, never handed out.
            unsafe { Acceptor::close(acceptor) };
            Err(error)
        }
    }
}

/// acceptorResume(acceptor: external): void. The caller must not pass a closed acceptor.
fn acceptor_resume(call: &Call) -> Result<napi_value> {
    // SAFETY: an external acceptorStart made, still open (the TypeScript wrapper tracks it).
    unsafe { &*call.external(0, "acceptor")?.cast::<Acceptor>() }.resume()?;
    call.env.undefined()
}

/// acceptorPause(acceptor: external): void
fn acceptor_pause(call: &Call) -> Result<napi_value> {
    // SAFETY: as for acceptorResume.
    unsafe { &*call.external(0, "acceptor")?.cast::<Acceptor>() }.pause()?;
    call.env.undefined()
}

/// releaseFreeMemory(): boolean (whether the allocator gave memory back)
fn release_free_memory(call: &Call) -> Result<napi_value> {
    call.env.boolean(process::release_free_memory())
}

/// acceptorClose(acceptor: external): void. Once per acceptor; the listen socket stays open.
fn acceptor_close(call: &Call) -> Result<napi_value> {
    // SAFETY: as for acceptorResume; closed once (the TypeScript wrapper tracks it).
    unsafe { Acceptor::close(call.external(0, "acceptor")?.cast()) };
    call.env.undefined()
}

/// localAddress(fd: number): { address: string; port: number } | null (not an IP socket)
fn local_address(call: &Call) -> Result<napi_value> {
    let env = call.env;
    match sockaddr::local_address(descriptor(call, 0)?)?.to_ip() {
        Some(address) => env.object(&[
            (c"address", env.string(&address.ip().to_string())?),
            (c"port", env.int32(address.port().into())?),
        ]),
        None => env.null(),
    }
}

/// relayStart(fds: [downstream, upstream], limits: [fromDownstream, fromUpstream],
/// cells: Float64Array[10], indexes: number[10], state: Float64Array,
/// onStop: (side: number, errno: number) => void): external. `cells[i]` and `indexes[i]` name
/// each flow's five statistics, the downstream's flow first (see relay.rs).
fn relay_start(call: &Call) -> Result<napi_value> {
    let fds = pair(call.integers(0, "fds", 0, MAX_INT32)?, "fds")?;
    let limits = pair(call.integers(1, "limits", 0, MAX_SAFE_INTEGER)?, "limits")?;
    let arrays = call.array(2, "cells", "an array of Float64Array")?;
    let indexes = call.integers(3, "indexes", 0, MAX_INT32)?;
    let wanted = SIDES * FLOW_CELLS;
    if arrays.len() != wanted || indexes.len() != wanted {
        return Err(
            ArgumentError::out_of_range("cells.length", &format!("{wanted}"), arrays.len().max(indexes.len())).into()
        );
    }
    let cell = |i: usize| -> Result<StatCell> {
        let (array, data) = call.float64_element(arrays[i], &format!("cells[{i}]"), indexes[i] as usize)?;
        Ok(StatCell { array, data })
    };
    let flow = |side: usize| -> Result<[StatCell; FLOW_CELLS]> {
        let base = side * FLOW_CELLS;
        Ok([cell(base)?, cell(base + 1)?, cell(base + 2)?, cell(base + 3)?, cell(base + 4)?])
    };
    let cells = [flow(0)?, flow(1)?];
    let (array, data) = call.float64_array(call.value(4), "state", STATE_CELLS)?;
    let state = StatCell { array, data };
    let on_stop = call.function(5, "onStop")?;
    let env = call.env;
    let limits = [limits[0] as usize, limits[1] as usize];
    let relay =
        Relay::start(env, [fds[0] as i32, fds[1] as i32], limits, cells, state, on_stop, env.string("ProxyRelay")?)?;
    match env.external(relay.cast()) {
        Ok(external) => Ok(external),
        Err(error) => {
            // SAFETY: just started, never handed out.
            unsafe { Relay::close(relay, env) };
            Err(error)
        }
    }
}

/// Two numbers, as a pair.
fn pair(values: Vec<i64>, name: &str) -> Result<[i64; 2]> {
    <[i64; 2]>::try_from(values)
        .map_err(|values| ArgumentError::out_of_range(&format!("{name}.length"), "2", values.len()).into())
}

/// relayClose(relay: external): [Buffer, Buffer], the bytes each flow read and had not written
/// (the downstream's first). Once per relay; the sockets stay open.
fn relay_close(call: &Call) -> Result<napi_value> {
    let relay = call.external(0, "relay")?.cast::<Relay>();
    let env = call.env;
    // SAFETY: an external relayStart made, closed once (the TypeScript wrapper tracks it).
    let [from_downstream, from_upstream] = unsafe { Relay::close(relay, env) };
    env.array(&[env.buffer(&from_downstream)?, env.buffer(&from_upstream)?])
}

/// socketSend(fd: number, first: string | Buffer, second?: Buffer): number, the bytes the kernel
/// took (0: none, the socket would block), or a negative errno. A string is sent as latin1.
fn socket_send(call: &Call) -> Result<napi_value> {
    let fd = descriptor(call, 0)?;
    // Most strings sent are one response or request head: room for them on the stack.
    let mut scratch = [MaybeUninit::<u8>::uninit(); 16 * 1024];
    let first = call.latin1_or_bytes(1, "first", &mut scratch)?;
    let second = if call.is_undefined(2)? { &[][..] } else { call.bytes(2, "second")? };
    let sent = match send::send(fd, &[first.as_slice(), second]) {
        Ok(sent) => sent.min(i32::MAX as usize) as i32,
        Err(errno) => -errno,
    };
    call.env.int32(sent)
}
