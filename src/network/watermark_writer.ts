// Envoy's watermark buffer on a socket's write side: when the bytes Node holds for the socket
// (writableLength) go over the connection's buffer limit, the writer reports it, and the
// reader that feeds the socket stops; once they drain to half the limit it may read again.
// Only writes that can leave the buffer at or over the low watermark carry a write callback,
// so a connection whose buffer never fills pays one comparison per write; on a TLS socket, whose
// writes all complete later, so does the first write made with no callback to come.
//
// On a plain TCP socket with nothing queued in Node, a write that carries a chunk (a body of more
// than a few hundred bytes, with the text before it) goes to the kernel through the addon
// (socketSend), in one system call and with no copy; only what the kernel does not take goes
// through Node's stream layer. Text alone goes through Node, whose string write costs no more.

import type * as net from 'node:net';
import type * as tls from 'node:tls';
import { socketSend } from '../native/addon';
import type { Counter, Gauge } from '../stats/stats';
import { socketFd } from './socket_fd';
import type { BatchedWriter, WriteBatch } from './write_batch';

/** Followed by the zero-length write whose callback says when a partial write has left. */
const NOTHING = Buffer.alloc(0);

export interface WatermarkCallbacks {
  /** The write buffer went over the high watermark (the limit). */
  onAboveHighWatermark(): void;
  /** The write buffer drained to the low watermark after being over the high one. */
  onBelowLowWatermark(): void;
}

export interface WriteStats {
  /** Bytes written (…_cx_tx_bytes_total). */
  readonly written: Counter;
  /** Bytes held for the socket, over every connection (…_cx_tx_bytes_buffered). */
  readonly buffered: Gauge;
}

export class WatermarkWriter implements BatchedWriter {
  private readonly high: number;
  private readonly low: number;
  private above = false;
  /** What this socket contributes to the buffered gauge now. */
  private counted = 0;
  /** Write callbacks still to come: while there are any, one of them will see the buffer shrink. */
  private pendingCallbacks = 0;
  private released = false;
  /** Writes wait for `batch` to flush them at the end of this turn of the event loop... */
  private batched = false;
  /** ...in `held`, to be sent straight to the kernel; else in Node's buffer, the socket corked. */
  private readonly held: (Buffer | string)[] = [];
  private heldBytes = 0;
  /** The socket's descriptor once known; -1 before, and always on a TLS socket. */
  private fd = -1;
  /**
   * Its writes complete later, never within write(): node's TLS socket defers every write's
   * completion, so its buffer never reads empty right after one, and the write itself carries the
   * callback that follows it (a zero-length write behind it would cost as much as the write).
   */
  private readonly completesLater: boolean;
  private onWritten: (() => void) | null = null;

  /**
   * `limit` 0 means no limit, as Envoy's per_connection_buffer_limit_bytes. With a `batch`, while
   * it holds, writes that leave the buffer under the low watermark wait for the end of the turn.
   */
  constructor(
    private readonly socket: net.Socket,
    limit: number,
    private readonly stats: WriteStats,
    private readonly callbacks: WatermarkCallbacks,
    private readonly batch: WriteBatch | null = null,
  ) {
    this.high = limit === 0 ? Infinity : limit;
    this.low = limit === 0 ? Infinity : Math.floor(limit / 2);
    this.completesLater = (socket as tls.TLSSocket).encrypted === true;
  }

  /** True while the buffer has been over the high watermark and not yet back to the low one. */
  get aboveHighWatermark(): boolean {
    return this.above;
  }

  /**
   * Writes a Buffer or latin1 text. True when the buffer is over the high watermark: the
   * caller stops reading its source until onBelowLowWatermark.
   */
  write(data: Buffer | string): boolean {
    this.stats.written.add(data.length);
    if (this.defer(data.length)) {
      if (this.socket.writableCorked === 0) this.hold(data);
      else this.socket.write(data, 'latin1', this.completionCallback());
      return this.above;
    }
    if (this.send(data) || this.socket.writableLength !== 0) return this.track();
    return this.above;
  }

  /** Writes text and a chunk in one system call. True as for write(). */
  writePair(text: string, chunk: Buffer): boolean {
    const socket = this.socket;
    this.stats.written.add(text.length + chunk.length);
    if (this.defer(text.length + chunk.length)) {
      if (socket.writableCorked === 0) {
        this.hold(text);
        this.hold(chunk);
        return this.above;
      }
      socket.write(text, 'latin1');
      socket.write(chunk, this.completionCallback());
      return this.above;
    }
    const sent = this.sendDirect(text, chunk);
    if (sent === text.length + chunk.length) return this.above;
    if (sent >= text.length) return this.send(chunk.subarray(sent - text.length)) || socket.writableLength !== 0 ? this.track() : this.above;
    socket.cork();
    socket.write(after(text, sent), 'latin1');
    // The chunk's callback, if it needs one, also covers the text queued before it.
    const tracked = this.send(chunk);
    socket.uncork();
    if (tracked || socket.writableLength !== 0) return this.track();
    return this.above;
  }

  /** The socket closed: its bytes leave the gauge, and later callbacks change nothing. */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.stats.buffered.sub(this.counted);
    this.counted = 0;
  }

  /** Half-closes after what was written, what waits for the end of the turn included. */
  end(): void {
    this.flushBatched();
    this.socket.end();
  }

  /** The batch's end of turn: what waited goes to the kernel, and what it did not take is tracked. */
  flushBatched(): void {
    if (!this.batched) return;
    this.batched = false;
    const socket = this.socket;
    if (this.held.length > 0) this.sendHeld();
    else socket.uncork();
    if (socket.writableLength !== 0 && !this.released && !socket.destroyed) this.track();
  }

  /**
   * What waited in `held`: a chunk, or text and a chunk, straight to the kernel; text alone, or
   * any other mix, and what the kernel did not take, through Node.
   */
  private sendHeld(): void {
    const held = this.held;
    const socket = this.socket;
    const first = held[0]!;
    const second = held[1];
    let sent = 0;
    if (held.length === 1 && typeof first !== 'string') sent = this.sendDirect(first);
    else if (held.length === 2 && typeof second !== 'string') sent = this.sendDirect(first, second);
    // A socket destroyed meanwhile drops them, as it drops what a corked socket holds.
    if (sent < this.heldBytes && !socket.destroyed) {
      if (held.length > 1) socket.cork();
      for (const piece of held) {
        if (sent >= piece.length) {
          sent -= piece.length;
          continue;
        }
        socket.write(after(piece, sent), 'latin1');
        sent = 0;
      }
      if (held.length > 1) socket.uncork();
    }
    held.length = 0;
    this.heldBytes = 0;
  }

  private hold(data: Buffer | string): void {
    this.held.push(data);
    this.heldBytes += data.length;
  }

  /**
   * Sends `first` and `second` straight to the kernel when the socket is plain TCP, connected, and
   * holds nothing in Node that they would overtake: the bytes it took, 0 when it was not tried or
   * took none, and 0 when it failed (Node then meets the failure with those bytes and closes the
   * socket its own way).
   */
  private sendDirect(first: Buffer | string, second?: Buffer): number {
    if (this.completesLater) return 0;
    const socket = this.socket;
    if (socket.writableLength !== 0 || socket.writableCorked !== 0 || socket.destroyed || socket.connecting || socket.writableEnded) return 0;
    if (this.fd < 0) this.fd = socketFd(socket) ?? -1;
    if (this.fd < 0) return 0;
    const sent = socketSend(this.fd, first, second);
    return sent > 0 ? sent : 0;
  }

  /**
   * True when `bytes` more wait for the end of the turn: in `held`, or in Node's buffer with the
   * socket corked when the addon cannot write to it (TLS, or bytes queued already). Any other write
   * (the batch does not hold, or it would take the buffer over the low watermark) goes at once,
   * after what waited, and is tracked.
   */
  private defer(bytes: number): boolean {
    const batch = this.batch;
    if (batch === null) return false;
    const socket = this.socket;
    if (!batch.holds || socket.writableLength + this.heldBytes + bytes > this.low || socket.destroyed) {
      this.flushBatched();
      return false;
    }
    if (!this.batched) {
      this.batched = true;
      // A socket the addon can write to waits in `held`; any other, corked.
      if (this.completesLater || socket.writableLength !== 0) socket.cork();
      batch.add(this);
    }
    return true;
  }

  /**
   * Writes `data`, a chunk straight to the kernel if it can (sendDirect), text and what the kernel
   * did not take through Node, with a callback when it may leave the buffer over the low watermark (or
   * will leave it non-empty, on a socket whose writes complete later). True when it has one.
   */
  private send(data: Buffer | string): boolean {
    const socket = this.socket;
    if (typeof data !== 'string') {
      const sent = this.sendDirect(data);
      if (sent === data.length) return false;
      data = after(data, sent);
    }
    if (socket.writableLength + data.length <= this.low && !this.awaitsCompletion()) {
      socket.write(data, 'latin1');
      return false;
    }
    this.pendingCallbacks++;
    socket.write(data, 'latin1', this.writeCallback());
    return true;
  }

  /** A write that waits for the end of the turn: on a socket whose writes complete later, the first carries the callback. */
  private completionCallback(): (() => void) | undefined {
    if (!this.awaitsCompletion()) return undefined;
    this.pendingCallbacks++;
    return this.writeCallback();
  }

  /** Made at the first write that needs it: most connections' writes never wait, and it would cost each idle one 100 bytes. */
  private writeCallback(): () => void {
    return (this.onWritten ??= () => this.written());
  }

  /** The next write will leave bytes in the buffer with no callback to come after them. */
  private awaitsCompletion(): boolean {
    return this.completesLater && this.pendingCallbacks === 0;
  }

  /**
   * Brings the gauge to writableLength and reports the high watermark. Bytes left without a
   * callback to come (the kernel took part of a small write) get a zero-length write whose
   * callback follows them, so the gauge returns to 0 when they leave.
   */
  private track(): boolean {
    const buffered = this.socket.writableLength;
    if (buffered !== 0) this.followLeftovers();
    this.stats.buffered.add(buffered - this.counted);
    this.counted = buffered;
    if (buffered > this.high && !this.above) {
      this.above = true;
      this.callbacks.onAboveHighWatermark();
    }
    return this.above;
  }

  private written(): void {
    this.pendingCallbacks--;
    if (this.released) return;
    const buffered = this.socket.writableLength;
    this.stats.buffered.add(buffered - this.counted);
    this.counted = buffered;
    if (this.above && buffered <= this.low) {
      this.above = false;
      this.callbacks.onBelowLowWatermark();
    }
    // Small writes queued behind the last callback have none of their own.
    if (buffered !== 0) this.followLeftovers();
  }

  /** Makes sure a callback follows the bytes buffered now (not after end(): the close releases). */
  private followLeftovers(): void {
    const socket = this.socket;
    if (this.pendingCallbacks !== 0 || socket.writableEnded || socket.destroyed) return;
    this.pendingCallbacks++;
    socket.write(NOTHING, this.writeCallback());
  }
}

/** `piece` without its first `bytes` bytes (a string's characters are its latin1 bytes). */
function after<T extends Buffer | string>(piece: T, bytes: number): T {
  if (bytes === 0) return piece;
  return (typeof piece === 'string' ? piece.slice(bytes) : piece.subarray(bytes)) as T;
}
