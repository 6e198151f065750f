// The byte stream node:http2 reads and writes for a downstream HTTP/2 connection, in front of the
// socket: node:http2 tells JavaScript of too few frames (no WINDOW_UPDATE, no empty DATA, no
// PRIORITY) for Envoy's flood limits, so their frame headers are counted here as the bytes pass.
// Frames written wait in the socket's buffer until it writes them out, as in Envoy's output
// buffer, and the client is read meanwhile, as Envoy reads it: past the buffer limit it is the
// streams' bodies that wait (encodeData says so, as Envoy's watermark callbacks do), not the
// frames nghttp2 answers with.

import { Duplex } from 'node:stream';
import type * as net from 'node:net';
import type { Clock } from '../../common/clock';
import { FRAME_HEADER_SIZE, FrameScanner, FrameType, type FrameVisitor } from './frame_scanner';
import type { Http2FloodLimits } from '../../config/model';
import { DELAYED_CLOSE_MS } from '../codec';
import { type Flood, isControlFrame, ProtocolConstraints } from './protocol_constraints';

/** The client connection preface (RFC 9113 section 3.4), before the first frame. */
const PREFACE_LENGTH = 24;
const ENHANCE_YOUR_CALM = 0xb;

export interface FloodGuardSettings {
  readonly limits: Http2FloodLimits;
  readonly clock: Clock;
  /** per_connection_buffer_limit_bytes: the write buffer's high watermark. */
  readonly bufferLimitBytes: number;
}

export interface FloodGuardCallbacks {
  /** Told once, when a limit closes the connection. */
  onFlood(flood: Flood): void;
  /** The socket's buffer, over the limit, was written out. */
  onWriteBufferDrained(): void;
}

export class FloodGuard extends Duplex implements FrameVisitor {
  private readonly constraints: ProtocolConstraints;
  private readonly inbound = new FrameScanner(PREFACE_LENGTH);
  private readonly outbound = new FrameScanner();
  private readonly outboundCounter = new OutboundFrameCounter();
  /** The highest stream the client opened: the last one a GOAWAY of ours names. */
  private lastStreamId = 0;
  private flood: Flood | null = null;
  /** Frames and control frames of each write the socket has not written out yet, in pairs. */
  private readonly unwritten: number[] = [];

  constructor(
    private readonly socket: net.Socket,
    private readonly settings: FloodGuardSettings,
    private readonly callbacks: FloodGuardCallbacks,
  ) {
    super({ allowHalfOpen: false });
    this.constraints = new ProtocolConstraints(settings.limits);
    socket.on('data', this.onSocketData);
    socket.on('end', this.onSocketEnd);
    socket.on('drain', this.onSocketDrain);
    socket.on('close', this.onSocketClose);
  }

  // ---- from the client ----------------------------------------------------------------------

  onFrame(type: number, flags: number, length: number, streamId: number, padding: number): boolean {
    if (type === FrameType.HEADERS && streamId > this.lastStreamId) this.lastStreamId = streamId;
    const flood = this.constraints.onInboundFrame(type, flags, length, padding, this.settings.clock);
    if (flood === null) return true;
    this.closeForFlood(flood, true);
    return false;
  }

  private readonly onSocketData = (chunk: Buffer): void => {
    if (this.flood !== null) return;
    this.inbound.scan(chunk, this);
    // The chunk that broke a limit is not read: the connection is closing.
    if (this.flood === null && !this.push(chunk)) this.socket.pause();
  };

  override _read(): void {
    if (this.flood === null) this.socket.resume();
  }

  private readonly onSocketEnd = (): void => {
    if (!this.destroyed) this.push(null);
  };

  private readonly onSocketClose = (): void => {
    this.destroy();
  };

  // ---- to the client ------------------------------------------------------------------------

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.send([chunk], callback);
  }

  override _writev(chunks: { chunk: Buffer }[], callback: (error?: Error | null) => void): void {
    this.send(
      chunks.map((c) => c.chunk),
      callback,
    );
  }

  private send(chunks: Buffer[], callback: (error?: Error | null) => void): void {
    const socket = this.socket;
    if (this.flood !== null || socket.destroyed) {
      callback();
      return;
    }
    const counter = this.outboundCounter;
    counter.reset();
    for (const chunk of chunks) this.outbound.scan(chunk, counter);
    const { frames, controlFrames, dataFrames } = counter;
    const flood = this.constraints.onOutboundFrames(frames, controlFrames, dataFrames);
    if (flood !== null) {
      // The queue is what overflowed: nothing more is written, the GOAWAY neither.
      this.closeForFlood(flood, false);
      callback();
      return;
    }
    // The socket calls back in the order of the writes: the counts wait in the same order.
    this.unwritten.push(frames, controlFrames);
    // One write to the kernel for what node:http2 wrote in one go, as it would have done itself.
    socket.cork();
    for (let i = 0; i < chunks.length; i++) socket.write(chunks[i], i === chunks.length - 1 ? this.onWritten : undefined);
    socket.uncork();
    callback();
  }

  private readonly onWritten = (): void => {
    const unwritten = this.unwritten;
    this.constraints.releaseOutboundFrames(unwritten.shift()!, unwritten.shift()!);
  };

  /** The socket holds more than the buffer limit; 'drain' will tell when it is written out (it follows a write that returned false). */
  aboveHighWatermark(): boolean {
    return this.socket.writableNeedDrain && this.socket.writableLength > this.settings.bufferLimitBytes;
  }

  private readonly onSocketDrain = (): void => {
    if (this.flood === null) this.callbacks.onWriteBufferDrained();
  };

  override _final(callback: (error?: Error | null) => void): void {
    this.socket.end();
    callback();
  }

  override _destroy(error: Error | null, callback: (error: Error | null) => void): void {
    if (this.flood === null) this.socket.destroy();
    callback(error);
  }

  // ---- a limit broken -----------------------------------------------------------------------

  /**
   * Counted and closed (also when nghttp2 found the flood first): after a GOAWAY
   * ENHANCE_YOUR_CALM when the client flooded what it sends, at once when the frames queued for
   * it did (Envoy closes without flushing them).
   */
  closeForFlood(flood: Flood, goAway: boolean): void {
    if (this.flood !== null) return;
    this.flood = flood;
    this.callbacks.onFlood(flood);
    const socket = this.socket;
    this.destroy();
    socket.pause();
    // A GOAWAY between two frames of nghttp2's would corrupt both.
    if (goAway && this.outbound.atFrameBoundary()) {
      socket.end(goAwayFrame(this.lastStreamId, ENHANCE_YOUR_CALM));
      const timer = setTimeout(() => socket.destroy(), DELAYED_CLOSE_MS);
      socket.once('close', () => clearTimeout(timer));
    } else socket.destroy();
  }
}

/** Counts the frames of one write: all of them, control frames, DATA frames. */
class OutboundFrameCounter implements FrameVisitor {
  frames = 0;
  controlFrames = 0;
  dataFrames = 0;

  reset(): void {
    this.frames = 0;
    this.controlFrames = 0;
    this.dataFrames = 0;
  }

  onFrame(type: number, flags: number): boolean {
    this.frames++;
    if (type === FrameType.DATA) this.dataFrames++;
    else if (isControlFrame(type, flags)) this.controlFrames++;
    return true;
  }
}

/** GOAWAY (RFC 9113 section 6.8) on stream 0, without debug data. */
function goAwayFrame(lastStreamId: number, errorCode: number): Buffer {
  const frame = Buffer.alloc(FRAME_HEADER_SIZE + 8);
  frame.writeUIntBE(8, 0, 3);
  frame[3] = FrameType.GOAWAY;
  frame.writeUInt32BE(lastStreamId & 0x7fffffff, FRAME_HEADER_SIZE);
  frame.writeUInt32BE(errorCode, FRAME_HEADER_SIZE + 4);
  return frame;
}
