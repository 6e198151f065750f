// The server side of HTTP/1.1 (Envoy's Http1::ServerConnectionImpl): parses requests off the
// socket, writes responses back, and owns what only HTTP/1 has: one stream at a time with
// pipelined requests held in the parser, keep-alive and `connection: close`, chunked framing,
// and the delayed close that lets a client read the last response.

import type * as net from 'node:net';
import type { Clock, Timer } from '../../common/clock';
import { DELAYED_CLOSE_MS, type HttpProtocol, type RequestDecoder, type ResponseEncoder, type ServerConnection, type ServerConnectionCallbacks } from '../codec';
import { BODY_CHUNKED, BODY_UNTIL_CLOSE, type RequestHead, type ResponseHead } from '../message';
import { reasonPhrase, statusLine } from '../status_text';
import type { Logger } from '../../log/logger_api';
import { CoalescingWriter } from '../../network/coalescing_writer';
import { type WatermarkCallbacks, WatermarkWriter, type WriteStats } from '../../network/watermark_writer';
import type { Counter } from '../../stats/stats';
import { LAST_CHUNK, lastChunkWith } from './chunked';
import { CodecError } from './codec_error';
import type { Http1CodecStats } from './codec_stats';
import { properCaseHead } from './header_key_format';
import type { ParserCallbacks } from './parser';
import { type Http1Settings, RequestParser } from './request_parser';
import type { WriteBatch } from '../../network/write_batch';

const CONTINUE = 'HTTP/1.1 100 Continue\r\n\r\n';

/** Where the class's socket listeners find the connection their socket carries. */
const CONNECTION = Symbol('Http1ServerConnection');
type ServedSocket = net.Socket & { [CONNECTION]: Http1ServerConnection };

/** What the connection manager configures once for all its HTTP/1 connections. */
export interface Http1ServerSettings extends Http1Settings {
  readonly stats: Http1CodecStats;
  /** header_key_format proper_case_words: response header names are written Proper-Case. */
  readonly properCase: boolean;
  /** http_protocol_options.enable_trailers: chunked messages carry their trailers. */
  readonly enableTrailers: boolean;
  /** per_connection_buffer_limit_bytes. */
  readonly bufferLimitBytes: number;
  /** Where the connection's small writes wait for the end of the event loop's turn; null: they go at once. */
  readonly writeBatch: WriteBatch | null;
  /** Bytes read off the connection. */
  readonly rxBytes: Counter;
  readonly txBytes: WriteStats;
  /** `http`, taken for this file by http1ServerLog. */
  readonly log: Logger;
  /** request_headers_timeout: from a request's first byte to its whole head; 0: no limit. */
  readonly requestHeadersTimeoutMs: number;
  readonly clock: Clock;
}

/** Http1ServerSettings.log from the `http` logger: taken once per connection manager, never per connection. */
export function http1ServerLog(http: Logger): Logger {
  return http.forFile(__filename);
}

export class Http1ServerConnection implements ServerConnection, ResponseEncoder, ParserCallbacks<RequestHead>, WatermarkCallbacks {
  readonly protocol: HttpProtocol = 'http1';
  private readonly parser: RequestParser;
  private readonly writer: WatermarkWriter;
  private readonly output: CoalescingWriter;
  /** The stream being served; null between requests. */
  private decoder: RequestDecoder | null = null;
  private request: RequestHead | null = null;
  private requestComplete = false;
  /** The request had no body by its head as it came. */
  private requestBodiless = false;
  private responseStarted = false;
  /** The response has a body, framed with chunked encoding. */
  private responseChunked = false;
  /** The response must not have a body (HEAD, 204, 304). */
  private responseBodiless = false;
  private closeAfterResponse = false;
  /** shutdown() was asked: the response under way (or the next) is the last. */
  private shuttingDown = false;
  private closing = false;
  private closedLocally = false;
  private remoteEnded = false;
  private readDisables = 0;
  /** Reading stopped because pipelined requests piled up while a response was pending. */
  private pipelineFull = false;
  private delayedCloseTimer: NodeJS.Timeout | null = null;
  /** request_headers_timeout's, made when first armed; enabled while a request's head arrives. */
  private headerTimer: Timer | null = null;

  constructor(
    private readonly socket: net.Socket,
    private readonly settings: Http1ServerSettings,
    private readonly callbacks: ServerConnectionCallbacks,
    /** For log lines (`[C<id>]`). */
    private readonly connectionId: number,
  ) {
    this.parser = new RequestParser(this, settings, settings.stats, settings.enableTrailers);
    this.writer = new WatermarkWriter(socket, settings.bufferLimitBytes, settings.txBytes, this, settings.writeBatch);
    this.output = new CoalescingWriter(this.writer);
    // A client may half-close after its request and still read the response.
    socket.allowHalfOpen = true;
    (socket as ServedSocket)[CONNECTION] = this;
    socket.on('data', Http1ServerConnection.onSocketData);
    socket.on('end', Http1ServerConnection.onSocketEnd);
    socket.on('error', ignoreError);
    socket.on('close', Http1ServerConnection.onSocketClose);
  }

  // ---- ParserCallbacks: the request ------------------------------------------------------

  onMessageHead(head: RequestHead): void {
    this.headerTimer?.disable();
    this.request = head;
    this.requestComplete = this.requestBodiless = head.bodyLength === 0;
    this.responseStarted = false;
    this.closeAfterResponse = head.connectionClose;
    const decoder = this.callbacks.newStream(this);
    this.decoder = decoder;
    decoder.decodeHeaders(head, this.requestComplete);
  }

  onMessageBody(chunk: Buffer): void {
    this.decoder?.decodeData(chunk);
  }

  onMessageComplete(trailers: string[] | null): void {
    const decoder = this.decoder;
    if (decoder === null) return;
    this.requestComplete = true;
    // Pipelined requests wait for this response.
    this.parser.pause();
    // A request without a body was complete with its head (filters may have reframed it since).
    if (!this.requestBodiless) decoder.decodeComplete(trailers);
  }

  // ---- ResponseEncoder ---------------------------------------------------------------------

  encode100Continue(): void {
    this.output.text(CONTINUE);
    this.output.flush();
  }

  encodeHeaders(response: ResponseHead, endStream: boolean): void {
    const request = this.request;
    const http10 = request?.http10 === true;
    const status = response.status;
    this.responseStarted = true;
    if (status === 101) {
      // The upstream took the upgrade: the 101 goes out with the protocol it switched to.
      this.startUnframed(response, `connection: upgrade\r\nupgrade: ${response.upgrade ?? request?.upgrade ?? ''}\r\n`);
      return;
    }
    if (request?.method === 'CONNECT' && status >= 200 && status < 300) {
      // A CONNECT's 2xx has no framing (RFC 9110 section 9.3.6): the tunnel follows.
      this.startUnframed(response, '');
      return;
    }
    this.responseBodiless = request?.method === 'HEAD' || status === 204 || status === 304;
    this.responseChunked = false;
    let close = this.closesAfterResponse();
    let head = statusLine(status);
    const headers = response.headers;
    for (let i = 0; i < headers.length; i += 2) head += `${headers[i]}: ${headers[i + 1]}\r\n`;
    if (response.contentLength >= 0 && response.bodyLength !== BODY_CHUNKED && response.bodyLength !== BODY_UNTIL_CLOSE) {
      head += `content-length: ${response.contentLength}\r\n`;
    } else if (endStream || this.responseBodiless) {
      if (!this.responseBodiless) head += 'content-length: 0\r\n';
    } else if (http10) {
      // HTTP/1.0 has no chunked coding: the close ends the body (Envoy does the same).
      close = true;
    } else {
      this.responseChunked = true;
      // Codings the upstream applied stay on the body, chunked on top of them.
      const codings = response.transferCodings;
      head += codings === null ? 'transfer-encoding: chunked\r\n' : `transfer-encoding: ${codings}, chunked\r\n`;
    }
    if (close) this.closeAfterResponse = true;
    head += connectionHeader(close, http10);
    if (this.settings.properCase) head = properCaseHead(head);
    // Held until the body, or the end of this batch of input, joins it.
    this.output.text(`${head}\r\n`);
    if (endStream) this.endResponse();
  }

  /**
   * The head of a response after which the bytes each way are unframed (an upgrade's new
   * protocol, a CONNECT's tunnel) until either side closes; `extra` ends its header lines.
   */
  private startUnframed(response: ResponseHead, extra: string): void {
    this.responseBodiless = false;
    this.responseChunked = false;
    this.closeAfterResponse = true;
    let head = statusLine(response.status);
    const headers = response.headers;
    for (let i = 0; i < headers.length; i += 2) head += `${headers[i]}: ${headers[i + 1]}\r\n`;
    head += extra;
    this.output.text(`${this.settings.properCase ? properCaseHead(head) : head}\r\n`);
  }

  encodeData(chunk: Buffer): boolean {
    if (this.responseBodiless || chunk.length === 0) return false;
    if (!this.responseChunked) return this.output.bytes(chunk);
    this.output.text(`${chunk.length.toString(16)}\r\n`);
    const over = this.output.bytes(chunk);
    this.output.text('\r\n');
    return over;
  }

  encodeComplete(trailers: readonly string[] | null): void {
    if (this.responseChunked) {
      this.output.text(trailers !== null && this.settings.enableTrailers ? lastChunkWith(trailers) : LAST_CHUNK);
    }
    this.endResponse();
  }

  flush(): boolean {
    return this.output.flush();
  }

  resetStream(): void {
    this.decoder = null;
    this.output.discard();
    this.destroy();
  }

  readDisable(disable: boolean): void {
    this.disableReading(disable);
  }

  // ---- ServerConnection ----------------------------------------------------------------------

  shutdown(): boolean {
    if (this.shuttingDown || this.closing) return false;
    this.shuttingDown = true;
    if (this.decoder === null) this.closeGracefully();
    return true;
  }

  close(): void {
    this.closeGracefully();
  }

  // ---- WatermarkCallbacks --------------------------------------------------------------------

  /** The stream pauses its source itself, from encodeData's answer. */
  onAboveHighWatermark(): void {}

  onBelowLowWatermark(): void {
    this.decoder?.onBelowWriteBufferLowWatermark();
  }

  // ---- the socket ----------------------------------------------------------------------------

  // The socket's listeners are the class's, shared by every connection, which each finds on its
  // socket: closures of its own cost an idle connection some 260 bytes.
  private static onSocketData(this: ServedSocket, chunk: Buffer): void {
    this[CONNECTION].received(chunk);
  }

  private static onSocketEnd(this: ServedSocket): void {
    this[CONNECTION].remoteEnd();
  }

  private static onSocketClose(this: ServedSocket): void {
    this[CONNECTION].socketClosed();
  }

  private received(chunk: Buffer): void {
    this.settings.rxBytes.add(chunk.length);
    if (this.closing) return;
    const log = this.settings.log;
    if (log.enabled('trace')) log.trace(`[C${this.connectionId}] parsing ${chunk.length} bytes`);
    // A request begins with its first byte: its head has request_headers_timeout from here.
    if (this.decoder === null) this.startHeaderTimer();
    try {
      this.parser.execute(chunk);
    } catch (e) {
      if (!(e instanceof CodecError)) throw e;
      this.protocolError(e);
      return;
    }
    this.onBatchEnd();
    // Held-back pipelined requests (the parser is paused while a response is pending) count
    // against the buffer limit; a head still being assembled does not.
    if (this.decoder !== null && this.requestComplete && this.parser.bufferedBytes > this.settings.bufferLimitBytes && !this.pipelineFull) {
      this.pipelineFull = true;
      this.disableReading(true);
    }
  }

  private remoteEnd(): void {
    this.remoteEnded = true;
    if (this.decoder === null) this.closeGracefully();
    else if (!this.requestComplete) this.endRequestAtClose();
  }

  private socketClosed(): void {
    this.headerTimer?.close();
    this.writer.release();
    if (this.delayedCloseTimer !== null) clearTimeout(this.delayedCloseTimer);
    const decoder = this.decoder;
    this.decoder = null;
    if (decoder !== null) decoder.onResetStream('connection termination');
    this.callbacks.onConnectionClosed(this.closedLocally);
  }

  /**
   * The client closed its side before its request was complete: an upgraded stream's request
   * ends there (the upstream gets the half-close); any other was cut short and cannot be answered.
   */
  private endRequestAtClose(): void {
    if (this.request?.bodyLength !== BODY_UNTIL_CLOSE) {
      this.destroy();
      return;
    }
    try {
      this.parser.finish();
    } catch (e) {
      if (!(e instanceof CodecError)) throw e;
      this.destroy();
      return;
    }
    this.onBatchEnd();
  }

  /** Whether the response about to start closes the connection. */
  private closesAfterResponse(): boolean {
    return this.closeAfterResponse || this.shuttingDown || this.remoteEnded || !this.requestComplete;
  }

  /** The response is written: the stream is over, and maybe the connection. */
  private endResponse(): void {
    this.output.flush();
    this.decoder = null;
    this.request = null;
    // An unfinished request leaves the rest of its body on the wire: the connection cannot go on.
    if (this.closeAfterResponse || !this.requestComplete || this.remoteEnded) {
      this.closeGracefully();
      return;
    }
    if (this.pipelineFull) {
      this.pipelineFull = false;
      this.disableReading(false);
    }
    try {
      this.parser.resume();
    } catch (e) {
      if (!(e instanceof CodecError)) throw e;
      this.protocolError(e);
      return;
    }
    // Pipelined requests just parsed send what they queued; one whose head is not whole yet began.
    if (this.decoder === null && this.parser.bufferedBytes > 0) this.startHeaderTimer();
    this.onBatchEnd();
  }

  private startHeaderTimer(): void {
    const ms = this.settings.requestHeadersTimeoutMs;
    if (ms === 0 || this.headerTimer?.enabled === true) return;
    // Made on first use: a connection without a slow head never pays for it.
    (this.headerTimer ??= this.settings.clock.createTimer(() => this.onHeaderTimeout())).enable(ms);
  }

  /** The head did not arrive in time: answered on a stream of its own, then the connection closes. */
  private onHeaderTimeout(): void {
    if (this.decoder !== null || this.closing) return;
    const decoder = this.callbacks.newStream(this);
    this.decoder = decoder;
    this.closeAfterResponse = true;
    this.requestComplete = false;
    decoder.onRequestHeaderTimeout();
  }

  /** The writes of the stream that this batch of input reached go out together. */
  private onBatchEnd(): void {
    this.decoder?.onDecodeBatchEnd();
  }

  /** What the peer sent is not HTTP/1: answered with the codec's status if nothing was sent yet, then closed. */
  private protocolError(error: CodecError): void {
    this.callbacks.onProtocolError(error.details);
    if (this.decoder !== null && this.responseStarted) {
      this.destroy();
      return;
    }
    // An error before a request head is answered on a stream of its own.
    const decoder = this.decoder ?? this.callbacks.newStream(this);
    this.decoder = decoder;
    this.closeAfterResponse = true;
    this.requestComplete = false;
    decoder.sendCodecErrorReply(error.status, reasonPhrase(error.status), error.details);
  }

  /** Flushes what was written, half-closes, and waits a little for the client to close. */
  private closeGracefully(): void {
    if (this.closing) return;
    this.closing = true;
    this.parser.pause();
    this.writer.end();
    this.delayedCloseTimer = setTimeout(() => this.destroy(), DELAYED_CLOSE_MS);
  }

  private destroy(): void {
    if (this.socket.destroyed) return;
    this.closedLocally = true;
    // What was written before a reset still goes out, also what the write batch holds for the turn's end.
    this.writer.flushBatched();
    this.socket.destroy();
  }

  /** Reading stops while anyone wants it stopped. */
  private disableReading(disable: boolean): void {
    if (disable) {
      if (this.readDisables++ === 0) this.socket.pause();
    } else if (--this.readDisables === 0) {
      this.socket.resume();
    }
  }
}

/** Says whether the connection stays open: HTTP/1.1 only when it does not, HTTP/1.0 either way. */
function connectionHeader(close: boolean, http10: boolean): string {
  if (close) return 'connection: close\r\n';
  return http10 ? 'connection: keep-alive\r\n' : '';
}

function ignoreError(): void {}
