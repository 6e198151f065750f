// A listen socket whose connections this process accepts itself (native/src/acceptor.rs)
// instead of through net.Server: libuv, out of descriptors, accepts the waiting connections and
// closes them without a word. Here a failed accept() is an 'acceptError', the connections wait
// in the backlog, and accepting resumes after `retryMs`, when descriptors may be free again.
//
// A connection's reads land in the listener's one buffer (Node's `onread`) instead of a new
// 64 KiB one each, and skip the Readable machinery: the largest share of a small request's cost
// in Node's own code. Each read is copied out at once and emitted as 'data', so whoever reads the
// connection (listener filters, the codecs, tcp_proxy) sees a plain socket; pause() and resume()
// stop and start the reads, and TLS or HTTP/2 take the handle over with their own buffers.

import { EventEmitter } from 'node:events';
import * as net from 'node:net';
import * as addon from '../native/addon';
import type { ExactConnectionBalancer } from './exact_connection_balancer';

export interface AcceptError {
  /** As Node spells it: 'EMFILE', 'ENFILE', ... */
  readonly code: string;
  readonly errno: number;
}

/** The most one read takes, as Node's own reads. */
const READ_BUFFER_BYTES = 64 * 1024;

interface ListenSocketEvents {
  connection: [socket: net.Socket];
  acceptError: [error: AcceptError];
}

export class ListenSocket extends EventEmitter<ListenSocketEvents> {
  private acceptor: addon.Acceptor | null;
  private retryTimer: NodeJS.Timeout | null = null;
  /** The overload manager's stop_accepting_connections holds the acceptor. */
  private paused = false;
  private readonly bound: net.AddressInfo;
  /** Every connection's reads, each copied out before the next. */
  private readonly readBuffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);
  /** Every connection's `onread` callback: one function, not one closure per connection. */
  private readonly onRead = emitReads(this.readBuffer);
  /** exact_balance: where the connections accepted here go, and how others' come. */
  private balancer: ExactConnectionBalancer | null = null;

  /** Takes over `fd`, a listening TCP socket: close() closes it. */
  constructor(
    private readonly fd: number,
    private readonly retryMs: number,
  ) {
    super();
    const local = addon.localAddress(fd);
    if (local === null) throw new Error(`fd ${fd} is not a listening IP socket`);
    this.bound = { address: local.address, port: local.port, family: net.isIPv6(local.address) ? 'IPv6' : 'IPv4' };
    this.acceptor = addon.acceptorStart(fd, (fds, code, errno) => this.onAccepted(fds, code, errno));
  }

  address(): net.AddressInfo {
    return this.bound;
  }

  get listening(): boolean {
    return this.acceptor !== null;
  }

  /**
   * Stops or resumes taking connections, the socket left open: while stopped they wait in the
   * backlog (or go to another worker sharing the socket). Envoy's disableListeners.
   */
  setAccepting(accepting: boolean): void {
    if (this.acceptor === null || this.paused === !accepting) return;
    this.paused = !accepting;
    this.balancer?.setAccepting(accepting);
    // A failed accept's retry resumes it when its time comes, unless paused meanwhile.
    if (this.paused) addon.acceptorPause(this.acceptor);
    else if (this.retryTimer === null) addon.acceptorResume(this.acceptor);
  }

  get balanced(): boolean {
    return this.balancer !== null;
  }

  /**
   * exact_balance: each connection accepted here goes to the worker `balancer` picks, and those
   * other workers pass here arrive through it; null, none. Replaces (and closes) the one before.
   */
  balanceWith(balancer: ExactConnectionBalancer | null): void {
    if (this.acceptor === null) {
      balancer?.close();
      return;
    }
    this.balancer?.close();
    this.balancer = balancer;
    balancer?.receive((fds, code, errno) => this.onAccepted(fds, code, errno, false));
    if (this.paused) balancer?.setAccepting(false);
  }

  /** Stops accepting and closes the socket (this process's copy of it). */
  close(): void {
    if (this.acceptor === null) return;
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    addon.acceptorClose(this.acceptor);
    this.acceptor = null;
    this.balancer?.close();
    this.balancer = null;
    addon.closeFd(this.fd);
  }

  private open(fd: number): net.Socket {
    // Node honors `onread` here as in net.connect(); its types only list it for the latter.
    const options: net.SocketConstructorOpts & { onread: net.OnReadOpts } = {
      fd,
      readable: true,
      writable: true,
      onread: { buffer: this.readBuffer, callback: this.onRead },
    };
    const socket = new net.Socket(options);
    // Every connection of a balanced socket was counted for this worker, here or where it was accepted.
    if (this.balancer !== null) socket.on('close', this.balancer.onConnectionClose);
    return socket;
  }

  /** A batch from the listen socket (`accepted`) or from the balancer's inbox. */
  private onAccepted(fds: number[], code: string | null, errno: number, accepted = true): void {
    const balancer = this.balancer;
    const mine = accepted && balancer !== null ? balancer.distribute(fds) : fds;
    for (const fd of mine) {
      if (this.acceptor !== null) {
        this.emit('connection', this.open(fd));
        continue;
      }
      // A handler closed the listener: the rest of the batch goes too, counted out as it was counted in.
      addon.closeFd(fd);
      balancer?.onConnectionClose();
    }
    if (code === null || this.acceptor === null) return;
    this.emit('acceptError', { code, errno });
    if (!accepted) {
      setTimeout(() => balancer?.resume(), this.retryMs);
      return;
    }
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (this.acceptor !== null && !this.paused) addon.acceptorResume(this.acceptor);
    }, this.retryMs);
  }
}

/**
 * The `onread` callback of connections reading into `buffer`: each read copied out and emitted.
 * Node calls it on the socket read (stream_base_commons' onStreamRead), which it takes from `this`.
 */
function emitReads(buffer: Buffer): (this: net.Socket, length: number) => boolean {
  return function (this: net.Socket, length: number): boolean {
    const chunk = Buffer.allocUnsafe(length);
    buffer.copy(chunk, 0, 0, length);
    this.emit('data', chunk);
    return true;
  };
}
