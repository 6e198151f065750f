// Typed access to the Rust addon in native/ (Linux only): POSIX shared memory, listen sockets
// that workers and later epochs share and the accepting on them, Unix datagram sockets that
// carry descriptors, file locks, SO_ORIGINAL_DST, TCP keepalive settings, and relaying bytes between
// two sockets with no JavaScript on the way, and sending to one. Everything else the proxy does stays in TypeScript.

import * as fs from 'node:fs';
import * as path from 'node:path';

const ADDON_FILE = path.join('native', 'proxy-native.node');

/**
 * A failed system call inside the addon, shaped like Node's system errors:
 * `shm_open(/proxy_shared_memory_0): File exists (EEXIST)`. `errno` is positive, as in errno.h
 * (Node's own errors carry it negated); `code` takes Node's spelling, so EWOULDBLOCK is 'EAGAIN'.
 * Bad arguments are not NativeErrors: they throw TypeError or RangeError, as Node's APIs do.
 */
export class NativeError extends Error {
  override readonly name = 'NativeError';

  constructor(
    message: string,
    readonly errno: number,
    readonly code: string,
    readonly syscall: string,
  ) {
    super(message);
  }
}

export class NativeAddonNotBuiltError extends Error {
  constructor(readonly searchedFrom: string) {
    super(
      `the native addon is not built: no ${ADDON_FILE} in ${searchedFrom} or any directory above it ` +
        '(run scripts/build-native.sh)',
    );
  }
}

export interface TcpListenSocket {
  readonly fd: number;
  /** The bound port: the kernel's choice when port 0 was asked for. */
  readonly port: number;
}

export interface Datagram {
  readonly data: Buffer;
  /** Descriptors that came with the datagram, close-on-exec, owned by the receiver. */
  readonly fds: number[];
}

export interface OriginalDestination {
  readonly address: string;
  readonly port: number;
}

/** A socket's keepalive settings as the kernel holds them (its defaults included). */
export interface TcpKeepaliveState {
  readonly enabled: boolean;
  readonly probes: number;
  readonly timeS: number;
  readonly intervalS: number;
}

/** A listen socket's acceptor (native/src/acceptor.rs), opaque to JavaScript. */
export interface Acceptor {
  readonly __acceptor: never;
}

/** What one wakeup of an acceptor took: new descriptors, and the accept() failure that stopped it. */
export type OnAccepted = (fds: number[], code: string | null, errno: number) => void;

/** A relay between two sockets (native/src/relay.rs), opaque to JavaScript. */
export interface Relay {
  readonly __relay: never;
}

/** Why a relay stopped: `side` (0 downstream, 1 upstream) ended its stream (errno 0) or failed with errno. */
export type OnRelayStop = (side: number, errno: number) => void;

export interface SocketAddress {
  readonly address: string;
  readonly port: number;
}

/** The addon's exports, as registered by native/src/bindings.rs. */
interface Binding {
  shmCreate(name: string, size: number, holdLock: boolean): ArrayBuffer;
  shmOpen(name: string): ArrayBuffer;
  shmUnlink(name: string): void;
  listenTcp(address: string, port: number, backlog: number, reusePort: boolean): TcpListenSocket;
  closeFd(fd: number): void;
  unixDgramBind(path: string): number;
  unixDgramSocket(): number;
  unixDgramSend(fd: number, destPath: string, data: Uint8Array, fds: readonly number[]): void;
  unixDgramRecv(fd: number, maxBytes: number, timeoutMs: number): Datagram | null;
  lockFile(path: string, wait: boolean): number;
  unlockFile(fd: number): void;
  getOriginalDst(fd: number): OriginalDestination | null;
  setParentDeathSignal(signal: number): void;
  setTcpKeepalive(fd: number, probes: number, timeS: number, intervalS: number): void;
  getTcpKeepalive(fd: number): TcpKeepaliveState;
  acceptorStart(fd: number, onAccepted: OnAccepted): Acceptor;
  inboxStart(fd: number, onReceived: OnAccepted): Acceptor;
  acceptorResume(acceptor: Acceptor): void;
  acceptorPause(acceptor: Acceptor): void;
  acceptorClose(acceptor: Acceptor): void;
  localAddress(fd: number): SocketAddress | null;
  releaseFreeMemory(): boolean;
  relayStart(
    fds: readonly number[],
    limits: readonly number[],
    cells: readonly Float64Array[],
    indexes: readonly number[],
    state: Float64Array,
    onStop: OnRelayStop,
  ): Relay;
  relayClose(relay: Relay): [Buffer, Buffer];
  socketSend(fd: number, first: string | Uint8Array, second?: Uint8Array): number;
}

/** Found from src/native/ and from dist/src/native/ alike: the nearest directory above holding it. */
function loadBinding(): Binding {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const file = path.join(dir, ADDON_FILE);
    if (fs.existsSync(file)) return require(file) as Binding;
    if (path.dirname(dir) === dir) throw new NativeAddonNotBuiltError(__dirname);
  }
}

/** The addon loads at first use, so that --help, --version and --mode validate run without it. */
function lazy<T>(load: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= load());
}

const binding = lazy(loadBinding);

interface RawSystemError extends Error {
  errno: number;
  code: string;
  syscall: string;
}

function isRawSystemError(error: unknown): error is RawSystemError {
  const fields = error as Partial<RawSystemError> | null;
  return (
    error instanceof Error &&
    typeof fields?.errno === 'number' &&
    typeof fields.code === 'string' &&
    typeof fields.syscall === 'string'
  );
}

/** Runs one addon call, turning its system errors into NativeError. */
function invoke<T>(call: () => T): T {
  try {
    return call();
  } catch (error) {
    if (isRawSystemError(error)) throw new NativeError(error.message, error.errno, error.code, error.syscall);
    throw error;
  }
}

/**
 * Creates the POSIX shared memory region `name` (mode 0600) of `size` bytes and maps it shared:
 * writes through the returned buffer are seen by every process that maps the region.
 * Throws EEXIST if it exists. The mapping goes away when the buffer is garbage collected.
 * With `holdLock`, this process holds an exclusive flock on the region (as lockFile takes it)
 * from the moment it exists until the process exits.
 */
export function shmCreate(name: string, size: number, holdLock = false): ArrayBuffer {
  return invoke(() => binding().shmCreate(name, size, holdLock));
}

/** Maps the existing region `name` whole (ENOENT if absent). */
export function shmOpen(name: string): ArrayBuffer {
  return invoke(() => binding().shmOpen(name));
}

/** Removes the region's name (ENOENT if absent); mappings stay valid until dropped. */
export function shmUnlink(name: string): void {
  invoke(() => binding().shmUnlink(name));
}

/**
 * A listening TCP socket on `address` (IPv4 or IPv6, the latter IPv6-only) with SO_REUSEADDR,
 * close-on-exec and blocking until a worker accepts on it with acceptorStart, which makes it
 * non-blocking. `reusePort`: SO_REUSEPORT too, so that one such socket per worker binds the address.
 */
export function listenTcp(address: string, port: number, backlog: number, reusePort = false): TcpListenSocket {
  return invoke(() => binding().listenTcp(address, port, backlog, reusePort));
}

export function closeFd(fd: number): void {
  invoke(() => binding().closeFd(fd));
}

/**
 * A non-blocking, close-on-exec Unix datagram socket bound to `path`; a leading '@' names the
 * abstract namespace (EADDRINUSE if taken), otherwise an existing file at `path` is replaced.
 */
export function unixDgramBind(path: string): number {
  return invoke(() => binding().unixDgramBind(path));
}

/** A non-blocking, close-on-exec Unix datagram socket bound to no name: enough to send from. */
export function unixDgramSocket(): number {
  return invoke(() => binding().unixDgramSocket());
}

/** Sends one datagram to `destPath` ('@' as above), duplicating `fds` into the receiver. */
export function unixDgramSend(fd: number, destPath: string, data: Uint8Array, fds: readonly number[]): void {
  invoke(() => binding().unixDgramSend(fd, destPath, data, fds));
}

/**
 * Waits up to `timeoutMs` (0: not at all; the wait blocks this thread) for one datagram of at
 * most `maxBytes`; null if none came. A longer datagram throws EMSGSIZE and is discarded.
 */
export function unixDgramRecv(fd: number, maxBytes: number, timeoutMs: number): Datagram | null {
  return invoke(() => binding().unixDgramRecv(fd, maxBytes, timeoutMs));
}

/**
 * Opens the existing `path` (ENOENT if absent) and exclusively flocks it, returning the
 * descriptor that holds the lock. With `wait` false a lock held elsewhere throws code 'EAGAIN' at once; with `wait`
 * true the call blocks this thread until the lock is free. The kernel releases the lock when
 * its holder exits.
 */
export function lockFile(path: string, wait: boolean): number {
  return invoke(() => binding().lockFile(path, wait));
}

/** Releases a lock taken with lockFile and closes its descriptor. */
export function unlockFile(fd: number): void {
  invoke(() => binding().unlockFile(fd));
}

/**
 * The destination of an accepted connection before iptables REDIRECT/DNAT rewrote it, or null
 * when it was not rewritten (or the socket is not IP). Take `fd` from socketFd().
 */
export function getOriginalDst(fd: number): OriginalDestination | null {
  return invoke(() => binding().getOriginalDst(fd));
}

/**
 * prctl(PR_SET_PDEATHSIG): `signal` (a number, e.g. os.constants.signals.SIGTERM) reaches this
 * process when the process that started it dies.
 */
export function setParentDeathSignal(signal: number): void {
  invoke(() => binding().setParentDeathSignal(signal));
}

/**
 * SO_KEEPALIVE on, and TCP_KEEPCNT, TCP_KEEPIDLE and TCP_KEEPINTVL set to `probes`, `timeS`
 * and `intervalS`; a 0 leaves that knob at the system default. `fd` as for getOriginalDst.
 */
export function setTcpKeepalive(fd: number, probes: number, timeS: number, intervalS: number): void {
  invoke(() => binding().setTcpKeepalive(fd, probes, timeS, intervalS));
}

export function getTcpKeepalive(fd: number): TcpKeepaliveState {
  return invoke(() => binding().getTcpKeepalive(fd));
}

/**
 * Accepts connections on the listen socket `fd` on this thread's event loop, calling
 * `onAccepted` with each batch of new (non-blocking, close-on-exec) descriptors. Makes `fd`
 * non-blocking (for every process that shares it), so that a batch ends when the backlog is
 * empty. When accept() fails (EMFILE, ENFILE, ENOBUFS, ...) the batch carries its code and
 * errno and polling pauses, the waiting connections staying in the backlog, until
 * acceptorResume.
 */
export function acceptorStart(fd: number, onAccepted: OnAccepted): Acceptor {
  return invoke(() => binding().acceptorStart(fd, onAccepted));
}

/**
 * The same for the Unix datagram socket `fd` (unixDgramBind), to which other processes send
 * connections they accepted (unixDgramSend with the descriptors): each batch carries every
 * descriptor its datagrams brought. A failed receive pauses it as a failed accept does.
 */
export function inboxStart(fd: number, onReceived: OnAccepted): Acceptor {
  return invoke(() => binding().inboxStart(fd, onReceived));
}

/** Polls again after a failure paused it. Never on a closed acceptor. */
export function acceptorResume(acceptor: Acceptor): void {
  invoke(() => binding().acceptorResume(acceptor));
}

/** Stops polling until acceptorResume: new connections wait in the backlog. Never on a closed acceptor. */
export function acceptorPause(acceptor: Acceptor): void {
  invoke(() => binding().acceptorPause(acceptor));
}

/** Stops accepting, once; `fd` stays open. */
export function acceptorClose(acceptor: Acceptor): void {
  invoke(() => binding().acceptorClose(acceptor));
}

/** The IP address and port a socket is bound to (getsockname); null for a non-IP socket. */
export function localAddress(fd: number): SocketAddress | null {
  return invoke(() => binding().localAddress(fd));
}

/**
 * Gives the allocator's free memory back to the system (glibc's malloc_trim(0)), whatever
 * MALLOC_TOP_PAD_ keeps; true when some was given back.
 */
export function releaseFreeMemory(): boolean {
  return invoke(() => binding().releaseFreeMemory());
}

/**
 * Relays bytes between two connected, non-blocking TCP sockets, `fds` = [downstream, upstream],
 * which stay open and the caller's: the relay polls duplicates of them, and the caller must not
 * read or write them meanwhile. Each flow (named for the side it reads) writes what it reads at
 * once; bytes the peer does not take wait, and beyond `limits[flow]` (0: no limit) the source is
 * not read until they drain to half of it. `cells[i]` and `indexes[i]`, five per flow: bytes
 * read, bytes written, bytes waiting (added and taken away), times paused, times resumed.
 * `state` (3 elements): bytes read from each side and the last activity (Date.now() time).
 * The first end of stream or error on either side stops it and calls `onStop`.
 */
export function relayStart(
  fds: readonly [number, number],
  limits: readonly [number, number],
  cells: readonly Float64Array[],
  indexes: readonly number[],
  state: Float64Array,
  onStop: OnRelayStop,
): Relay {
  return invoke(() => binding().relayStart(fds, limits, cells, indexes, state, onStop));
}

/** Stops a relay, once: each flow's unsent bytes, the downstream's first. The sockets stay open. */
export function relayClose(relay: Relay): [Buffer, Buffer] {
  return invoke(() => binding().relayClose(relay));
}

/**
 * Sends `first` (a string as latin1) and `second` after it to the connected socket `fd` in one
 * system call, never blocking: the bytes the kernel took (0: none, the socket would block), or
 * a negative errno (-EPIPE, -ECONNRESET, ...). No exception for a failed send: the caller hands
 * the bytes to Node, which meets the same failure and closes the socket its own way.
 */
export function socketSend(fd: number, first: string | Uint8Array, second?: Uint8Array): number {
  return binding().socketSend(fd, first, second);
}
