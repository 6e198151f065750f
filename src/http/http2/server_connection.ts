// The server side of HTTP/2 (Envoy's Http2::ServerConnectionImpl) on node:http2 (nghttp2), which
// reads and writes the socket itself: each stream is handed to the connection manager as a
// request decoder and answered through a ResponseEncoder. Shutdown is GOAWAY: streams in flight
// finish, new ones are refused. What Envoy's codec checks as a header list arrives
// (headers_with_underscores_action, max_headers_count, a malformed list) is checked here.

import * as http2 from 'node:http2';
import type * as net from 'node:net';
import type { DownstreamHttp2ProtocolOptions, HeadersWithUnderscoresAction } from '../../config/model';
import type { HttpProtocol, RequestDecoder, ResponseEncoder, ServerConnection, ServerConnectionCallbacks } from '../codec';
import type { RequestHead, ResponseHead } from '../message';
import { dropUnderscoreHeaders, hasUnderscoreHeader } from '../underscore_headers';
import type { Http2CodecStats } from './codec_stats';
import { FloodGuard, type FloodGuardCallbacks, type FloodGuardSettings } from './flood_guard';
import { addHeaders, headersOfList, MalformedHeaders, requestHeadOf, trailersOf } from './header_map';
import type { Flood } from './protocol_constraints';

const { NGHTTP2_FLAG_END_STREAM, NGHTTP2_NO_ERROR } = http2.constants;
/** nghttp2's NGHTTP2_ERR_FLOODED: more PING and SETTINGS acknowledgements waiting in its queue than it allows (1000). */
const NGHTTP2_ERR_FLOODED = -904;

/** What the connection manager configures once for all its HTTP/2 connections. */
export interface Http2ServerSettings {
  readonly options: DownstreamHttp2ProtocolOptions;
  /** options.floodLimits, with the clock and buffer limit the flood guard runs them with. */
  readonly floodGuard: FloodGuardSettings;
  readonly stats: Http2CodecStats;
  readonly maxHeadersCount: number;
  readonly headersWithUnderscoresAction: HeadersWithUnderscoresAction;
}

export class Http2ServerConnection implements ServerConnection, FloodGuardCallbacks {
  readonly protocol: HttpProtocol = 'http2';
  private readonly session: http2.ServerHttp2Session;
  private readonly scheme: string;
  private readonly streams = new Set<Http2ServerStream>();
  private readonly guard: FloodGuard;
  /** Streams whose body waits for the socket's buffer to be written out. */
  private readonly waitingForSocket = new Set<Http2ServerStream>();
  /** node:http2 streams not yet closed (a stream ended here may still be flushing its response). */
  private openStreams = 0;
  private shuttingDown = false;
  /** We sent GOAWAY (shutdown, close) or nghttp2 refused the peer: the close is ours. */
  private closedLocally = false;
  private closeReported = false;

  constructor(
    socket: net.Socket,
    readonly settings: Http2ServerSettings,
    private readonly callbacks: ServerConnectionCallbacks,
  ) {
    this.scheme = 'encrypted' in socket && socket.encrypted === true ? 'https' : 'http';
    const options = settings.options;
    socket.on('error', ignoreError);
    // Before node:http2 hears of it (through the flood guard): the streams still open are the
    // ones the close cut short. The client's FIN is its close: HTTP/2 has no half-close.
    socket.on('end', this.onSocketClose);
    socket.on('close', this.onSocketClose);
    this.guard = new FloodGuard(socket, settings.floodGuard, this);
    this.session = http2.performServerHandshake(this.guard, {
      settings: {
        maxConcurrentStreams: options.maxConcurrentStreams,
        initialWindowSize: options.initialStreamWindowSize,
        headerTableSize: options.hpackTableSize,
        // RFC 8441: a client may open a WebSocket (or another upgrade) as a CONNECT stream.
        enableConnectProtocol: options.allowConnect,
      },
      // The windows bound what is buffered per stream and connection, as in Envoy.
      maxSessionMemory: Math.max(10, Math.ceil(options.initialConnectionWindowSize / (1024 * 1024)) * 2),
      // max_headers_count is checked per stream, so that it is counted and reset as in Envoy;
      // nghttp2's own limit (a silent ENHANCE_YOUR_CALM) is only a backstop against floods.
      maxHeaderListPairs: Math.max(128, 2 * settings.maxHeadersCount),
    });
    const session = this.session;
    session.on('error', this.onSessionError);
    session.on('close', this.onSessionClose);
    session.on('stream', this.onStream);
    session.on('goaway', this.onPeerGoaway);
    if (options.initialConnectionWindowSize > 65535) session.setLocalWindowSize(options.initialConnectionWindowSize);
  }

  shutdown(): boolean {
    if (this.shuttingDown || this.session.destroyed) return false;
    this.shuttingDown = true;
    this.closedLocally = true;
    this.session.close();
    return true;
  }

  close(): void {
    if (this.session.destroyed) return;
    this.closedLocally = true;
    this.session.close();
  }

  streamEnded(stream: Http2ServerStream): void {
    this.streams.delete(stream);
    this.waitingForSocket.delete(stream);
  }

  /** Envoy's connection-level high watermark: true when `stream`'s body must wait for the socket (it is told when to go on). */
  waitForSocket(stream: Http2ServerStream): boolean {
    if (!this.guard.aboveHighWatermark()) return false;
    this.waitingForSocket.add(stream);
    return true;
  }

  // ---- FloodGuardCallbacks -------------------------------------------------------------------

  onWriteBufferDrained(): void {
    const waiting = [...this.waitingForSocket];
    this.waitingForSocket.clear();
    for (const stream of waiting) stream.onSocketDrained();
  }

  /** A flood limit closes the connection (Envoy's codec flood error: counted, not as a protocol error). */
  onFlood(flood: Flood): void {
    this.settings.stats[flood].inc();
    this.closedLocally = true;
    // Before node:http2 closes them as if the client had reset them.
    this.onSocketClose();
  }

  streamClosed(): void {
    this.openStreams--;
  }

  private readonly onStream = (stream: http2.ServerHttp2Stream, _headers: unknown, flags: number, raw: string[]): void => {
    const active = new Http2ServerStream(this, stream);
    this.streams.add(active);
    this.openStreams++;
    active.start(this.callbacks.newStream(active), raw, (flags & NGHTTP2_FLAG_END_STREAM) !== 0, this.scheme);
  };

  /**
   * nghttp2 refused what the peer sent (a bad preface, a frame it cannot parse): it sent GOAWAY
   * and node:http2 closes the connection, then reports ERR_HTTP2_ERROR. Envoy counts a codec
   * error as a protocol error and closes the connection itself.
   */
  private readonly onSessionError = (error: Error & { code?: string; errno?: number }): void => {
    if (error.code !== 'ERR_HTTP2_ERROR') return;
    // The control frames' queue overflowed in nghttp2 before it reached the socket's.
    if (error.errno === NGHTTP2_ERR_FLOODED) {
      this.guard.closeForFlood('outbound_control_flood', false);
      return;
    }
    this.callbacks.onProtocolError(error.message);
    this.closedLocally = true;
  };

  /**
   * The peer's GOAWAY with nothing in flight ends the connection at once. node:http2 would close
   * gracefully, which lets nghttp2 1.61 go on reading the same buffer: a new stream's HEADERS then
   * a frame of a bad size abort the worker (an assertion fixed in nghttp2 1.67.1). Destroying the
   * session here makes nghttp2 ignore the rest; streams in flight still finish.
   */
  private readonly onPeerGoaway = (): void => {
    if (this.openStreams === 0) this.session.destroy();
  };

  private readonly onSocketClose = (): void => {
    for (const stream of [...this.streams]) stream.onConnectionClosed();
  };

  /**
   * After the socket's close and the session's error: only now is it known whose close it was.
   * Reported once: when the socket closes under a session with no stream open, node:http2 20
   * destroys the session twice (socketOnClose's close() then its closeSession()), so 'close' comes twice.
   */
  private readonly onSessionClose = (): void => {
    if (this.closeReported) return;
    this.closeReported = true;
    this.callbacks.onConnectionClosed(this.closedLocally);
  };
}

/** One stream of a downstream HTTP/2 connection: its request goes to `decoder`, its response to nghttp2. */
class Http2ServerStream implements ResponseEncoder {
  private decoder: RequestDecoder | null = null;
  /** The response ended, or the stream was reset: nothing more is reported either way. */
  private done = false;
  private responseEnded = false;
  /** The response's trailers, sent when nghttp2 asks for them. */
  private trailers: readonly string[] | null = null;
  /** The request's trailers, delivered with its end. */
  private requestTrailers: string[] | null = null;
  /** The client ended its request (END_STREAM seen). */
  private requestEnded = false;
  /** The connection manager asked for no more of the request's body for now. */
  private readDisabled = false;

  constructor(
    private readonly owner: Http2ServerConnection,
    private readonly stream: http2.ServerHttp2Stream,
  ) {}

  start(decoder: RequestDecoder, raw: string[], endStream: boolean, scheme: string): void {
    this.decoder = decoder;
    this.requestEnded = endStream;
    const stream = this.stream;
    stream.on('error', ignoreError);
    stream.on('close', this.onClose);
    stream.on('drain', this.onDrain);
    if (!endStream) {
      stream.on('readable', this.onReadable);
      stream.on('trailers', this.onTrailers);
    }
    if (!this.acceptsHeaderList(raw)) return;
    let head: RequestHead;
    try {
      head = requestHeadOf(raw, endStream, scheme);
    } catch (e) {
      if (!(e instanceof MalformedHeaders)) throw e;
      this.owner.settings.stats.rx_messaging_error.inc();
      decoder.sendCodecErrorReply(400, '', 'http2.violation.of.messaging.rule');
      return;
    }
    decoder.decodeHeaders(head, endStream);
  }

  /**
   * What Envoy's HTTP/2 codec checks as the header list arrives: headers_with_underscores_action
   * and max_headers_count (pseudo-headers included). False when the stream was reset for it.
   */
  private acceptsHeaderList(raw: string[]): boolean {
    const settings = this.owner.settings;
    const stats = settings.stats;
    let count = raw.length / 2;
    if (settings.headersWithUnderscoresAction !== 'ALLOW') {
      if (settings.headersWithUnderscoresAction === 'REJECT_REQUEST') {
        if (hasUnderscoreHeader(raw)) {
          stats.requests_rejected_with_underscores_in_headers.inc();
          this.refuse();
          return false;
        }
      } else {
        const dropped = dropUnderscoreHeaders(raw);
        if (dropped > 0) stats.dropped_headers_with_underscores.add(dropped);
        count -= dropped;
      }
    }
    if (count > settings.maxHeadersCount) {
      stats.header_overflow.inc();
      this.refuse();
      return false;
    }
    return true;
  }

  /** The codec refuses the stream (RST_STREAM INTERNAL_ERROR); Envoy counts it as a reset the stream saw. */
  private refuse(): void {
    this.owner.settings.stats.tx_reset.inc();
    resetWithInternalError(this.stream);
    this.end()?.onResetStream('local reset');
  }

  // ---- ResponseEncoder ---------------------------------------------------------------------

  encode100Continue(): void {
    if (!this.done && !this.stream.destroyed) this.stream.additionalHeaders({ ':status': 100 });
  }

  encodeHeaders(response: ResponseHead, endStream: boolean): void {
    if (this.done || this.stream.destroyed) return;
    // An upgrade's 101 is a 200 on an HTTP/2 stream (RFC 8441; Envoy's transformUpgradeResponseFromH1toH2).
    const headers: http2.OutgoingHttpHeaders = { ':status': response.status === 101 ? 200 : response.status };
    addHeaders(headers, response.headers);
    if (response.contentLength >= 0 && response.bodyLength >= 0) headers['content-length'] = response.contentLength;
    this.responseEnded = endStream;
    // A response whose body may end with trailers waits for them (HTTP/2 can only send them if
    // asked for at the start); any other ends with its last DATA frame, as Envoy's does.
    const waitForTrailers = !endStream && response.mayEndWithTrailers;
    this.stream.respond(headers, { endStream, waitForTrailers });
    if (waitForTrailers) this.stream.on('wantTrailers', this.onWantTrailers);
    if (endStream) this.end();
  }

  encodeData(chunk: Buffer): boolean {
    if (this.responseEnded || chunk.length === 0 || this.stream.destroyed) return false;
    return !this.stream.write(chunk) || this.owner.waitForSocket(this);
  }

  encodeComplete(trailers: readonly string[] | null): void {
    if (this.done) return;
    if (!this.responseEnded && !this.stream.destroyed) {
      this.responseEnded = true;
      this.trailers = trailers;
      this.stream.end();
    }
    this.end();
  }

  /** nghttp2 batches frames itself. */
  flush(): boolean {
    return false;
  }

  resetStream(): void {
    if (this.done) return;
    this.owner.settings.stats.tx_reset.inc();
    resetWithInternalError(this.stream);
    this.end();
  }

  readDisable(disable: boolean): void {
    this.readDisabled = disable;
    if (!disable) this.onReadable();
  }

  /** The connection closed under the stream. */
  onConnectionClosed(): void {
    this.end()?.onResetStream('connection termination');
  }

  // ---- the stream ----------------------------------------------------------------------------

  /**
   * The body is read in paused mode, which learns of the request's end without the stream
   * emitting 'end'. Once it has, node:http2 destroys the stream as soon as the response's END_STREAM
   * is out, with that last write still in flight, and each such completion then costs a
   * stack-captured ERR_STREAM_DESTROYED; left unemitted, node:http2 waits for the write.
   * Once the response is done, what is left is read and dropped, so the connection's window stays open.
   */
  private readonly onReadable = (): void => {
    const stream = this.stream;
    while (!this.readDisabled && stream.readableLength > 0) {
      // At most a high watermark's worth: reading more raises the stream's watermark for good.
      const chunk = stream.read(Math.min(stream.readableLength, stream.readableHighWaterMark)) as Buffer | null;
      if (chunk === null) break;
      const decoder = this.decoder;
      if (this.done || decoder === null) continue;
      decoder.decodeData(chunk);
      decoder.onDecodeBatchEnd();
    }
    if (this.requestEnded || stream.readableLength > 0 || !(stream as unknown as PushedEnd)._readableState.ended) return;
    this.requestEnded = true;
    // node:http2 pushes the end right after queueing the request's trailers for the next tick.
    process.nextTick(this.onRequestEnd);
  };

  private readonly onTrailers = (_headers: unknown, _flags: number, raw: string[]): void => {
    this.requestTrailers = trailersOf(raw);
  };

  private readonly onRequestEnd = (): void => {
    if (!this.done) this.decoder?.decodeComplete(this.requestTrailers);
  };

  /** The stream's buffer went out to nghttp2; the body goes on unless the socket's buffer is still over the limit. */
  private readonly onDrain = (): void => {
    if (!this.done && !this.owner.waitForSocket(this)) this.decoder?.onBelowWriteBufferLowWatermark();
  };

  /** The socket's buffer the body waited for was written out. */
  onSocketDrained(): void {
    if (this.stream.writableNeedDrain) return;
    this.onDrain();
  }

  /** Without trailers node:http2 ends the response with an empty DATA frame. */
  private readonly onWantTrailers = (): void => {
    if (this.stream.destroyed) return;
    const trailers = this.trailers;
    this.trailers = null;
    this.stream.sendTrailers(trailers === null ? {} : headersOfList(trailers));
  };

  /** Closed before the response was sent: the client reset the stream (or the connection went). */
  private readonly onClose = (): void => {
    this.owner.streamClosed();
    if (this.done) return;
    const code = this.stream.rstCode;
    const byPeer = code !== undefined && code !== 0;
    if (byPeer) this.owner.settings.stats.rx_reset.inc();
    this.end()?.onResetStream(byPeer ? 'remote reset' : 'connection termination');
  };

  /** The stream is over for this side: returns the decoder to tell, once. */
  private end(): RequestDecoder | null {
    if (this.done) return null;
    this.done = true;
    const stream = this.stream;
    // A request answered before its end: as Envoy (RFC 9113 section 8.1), RST_STREAM NO_ERROR
    // once the response is out tells the client to stop sending.
    if (!this.requestEnded && this.responseEnded && !stream.destroyed) stream.close(NGHTTP2_NO_ERROR);
    // What is left of the request is read and dropped (onReadable); its end is left for
    // node:http2 to emit at the stream's close, after the response's last write completed.
    if (!this.requestEnded) {
      this.readDisabled = false;
      this.onReadable();
    }
    this.owner.streamEnded(this);
    const decoder = this.decoder;
    this.decoder = null;
    return decoder;
  }
}

/**
 * RST_STREAM INTERNAL_ERROR. Not stream.close(code): it ends the response (END_STREAM) before the
 * reset, so a client would take a response cut short for a whole one. Destroying with an error
 * resets the stream as it stands.
 */
function resetWithInternalError(stream: http2.ServerHttp2Stream): void {
  stream.destroy(new Error('stream reset by the proxy'));
}

function ignoreError(): void {}

/**
 * The one piece of a Readable's state read here: its end was pushed, which node's streams only
 * report publicly ('end', readableEnded) once it is also emitted.
 */
interface PushedEnd {
  readonly _readableState: { readonly ended: boolean };
}
