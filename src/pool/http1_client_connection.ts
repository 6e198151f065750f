// One HTTP/1.1 connection to an upstream host, carrying one request at a time for its pool: the
// HTTP/1 client codec. It serializes request header maps, frames bodies onto the wire and parses
// responses, reporting them to the stream (the router's upstream request) attached to it.

import type { RequestEncoder, ResponseDecoder, StreamResetReason } from '../http/codec';
import { LAST_CHUNK, lastChunkWith } from '../http/http1/chunked';
import { CodecError } from '../http/http1/codec_error';
import { properCaseHead } from '../http/http1/header_key_format';
import { BODY_CHUNKED, type RequestHead, type ResponseHead } from '../http/message';
import { CoalescingWriter } from '../network/coalescing_writer';
import type { ParserCallbacks } from '../http/http1/parser';
import { ResponseParser } from '../http/http1/response_parser';
import type { Logger } from '../log/logger_api';
import type { HostStats } from '../stats/stats';
import type { ClusterInfo } from '../upstream/worker/cluster_info';
import type { DownstreamAddresses } from '../network/downstream_addresses';
import { type ConnectFailureReason, type ConnectionTarget, UpstreamConnection, type UpstreamConnectionCallbacks } from './upstream_connection';
import type { Clock, Timer } from '../common/clock';

/** The pool that owns a connection. */
export interface ConnectionOwner {
  onConnectionConnected(connection: Http1ClientConnection): void;
  onConnectionFailure(connection: Http1ClientConnection, reason: ConnectFailureReason): void;
  /** The attached stream ended; `reusable` when the connection can take another request. */
  onStreamDone(connection: Http1ClientConnection, reusable: boolean): void;
  onConnectionClosed(connection: Http1ClientConnection): void;
}


/** UpstreamConnectionLogs' logger for this file's lines, from `client`: taken once per worker, never per connection. */
export function http1ClientLog(client: Logger): Logger {
  return client.forFile(__filename);
}

export class Http1ClientConnection implements RequestEncoder, UpstreamConnectionCallbacks, ParserCallbacks<ResponseHead> {
  readonly hostStats: HostStats;
  /** Requests this connection has been given (max_requests_per_connection counts them). */
  requestCount = 0;
  /** Takes no new request (idle timeout, max_connection_duration): closes now or when its request ends. */
  draining = false;
  private readonly cluster: ClusterInfo;
  private readonly upstream: UpstreamConnection;
  /** `client`. */
  private readonly log: Logger;
  private readonly parser: ResponseParser;
  private readonly output: CoalescingWriter;
  private stream: ResponseDecoder | null = null;
  private requestChunked = false;
  /** The request asks to switch protocols: its end half-closes the connection. */
  private upgrading = false;
  private requestComplete = false;
  private responseComplete = false;
  /** The complete response's trailers, when enable_trailers kept some. */
  private responseTrailers: string[] | null = null;
  private keepAlive = true;
  /** Made the first time the connection goes idle, then refreshed each time it does. */
  private idleTimer: Timer | null = null;
  private durationTimer: Timer | null = null;
  private readonly clock: Clock;

  constructor(
    target: ConnectionTarget,
    private readonly owner: ConnectionOwner,
    /** The downstream connection it was opened for (see ClusterInfo.downstreamSpecificConnections). */
    readonly downstream: DownstreamAddresses,
    /** Its number in log lines. */
    readonly id: number,
  ) {
    this.hostStats = target.hostStats;
    this.cluster = target.cluster;
    this.clock = target.clock;
    this.log = target.logs.http1Client;
    if (this.log.enabled('debug')) this.log.debug(`[C${id}] connecting`);
    this.parser = new ResponseParser(this, target.cluster.maxResponseHeadersCount, target.cluster.http1Trailers);
    this.upstream = new UpstreamConnection(target, this, { allowHalfOpen: false, http1: true }, downstream, id);
    this.output = new CoalescingWriter(this.upstream.output);
  }

  /** Attaches the stream that hears the next response; its request follows through encodeHeaders. */
  newStream(stream: ResponseDecoder): RequestEncoder {
    this.stream = stream;
    this.requestComplete = false;
    this.keepAlive = true;
    this.parser.resume();
    return this;
  }

  /** Queues the request line and header lines; they leave with the body, at flush() or at the end. */
  encodeHeaders(head: RequestHead, endStream: boolean): void {
    const connect = head.method === 'CONNECT';
    this.parser.expectResponse(head.method, head.upgrade !== null);
    this.upgrading = head.upgrade !== null || connect;
    // A body of unknown length (an HTTP/2 request without content-length) goes chunked; a
    // CONNECT's is the tunnel's bytes, unframed.
    this.requestChunked = !endStream && head.bodyLength === BODY_CHUNKED && !connect;
    // CONNECT's target is the authority (RFC 9112 section 3.2.3).
    let text = `${head.method} ${connect ? head.authority : head.path} HTTP/1.1\r\nhost: ${head.authority}\r\n`;
    const headers = head.headers;
    for (let i = 0; i < headers.length; i += 2) text += `${headers[i]}: ${headers[i + 1]}\r\n`;
    // An upgrade's body is the new protocol's bytes, unframed.
    if (head.upgrade !== null) text += `connection: upgrade\r\nupgrade: ${head.upgrade}\r\n`;
    else if (this.requestChunked) text += 'transfer-encoding: chunked\r\n';
    else if (head.contentLength >= 0 && !connect) text += `content-length: ${head.contentLength}\r\n`;
    text += '\r\n';
    this.output.text(this.cluster.properCaseHeaderKeys ? properCaseHead(text) : text);
    if (endStream) this.endRequest();
  }

  /** Sends or queues a body chunk; true when the write buffer is over the cluster's limit. */
  encodeData(chunk: Buffer, endStream: boolean): boolean {
    let over = false;
    if (chunk.length > 0) {
      if (!this.requestChunked) over = this.output.bytes(chunk);
      else {
        this.output.text(`${chunk.length.toString(16)}\r\n`);
        over = this.output.bytes(chunk);
        this.output.text('\r\n');
      }
    }
    return endStream ? this.endRequest() || over : over;
  }

  /** Trailers go on a chunked request when the cluster's enable_trailers asks for them; else they are dropped, as in Envoy. */
  encodeTrailers(trailers: readonly string[]): void {
    this.endRequest(this.cluster.http1Trailers ? trailers : null);
  }

  /** Ends the request and sends everything queued. */
  private endRequest(trailers: readonly string[] | null = null): boolean {
    this.requestComplete = true;
    if (this.requestChunked) this.output.text(trailers === null ? LAST_CHUNK : lastChunkWith(trailers));
    const over = this.output.flush();
    // The downstream closed its side of the upgraded connection: so does this one, to the upstream.
    if (this.upgrading) this.upstream.end();
    return over;
  }

  /** Sends what is queued; true when the write buffer is over the cluster's limit. */
  flush(): boolean {
    return this.output.flush();
  }

  /** The stream gives up on its response (timeout, downstream gone): the connection closes. */
  resetStream(): void {
    if (this.stream === null) return;
    this.stream = null;
    // When reset from a parser callback, nothing more of the response is delivered.
    this.parser.pause();
    this.output.discard();
    this.cluster.stats.counters.upstream_rq_tx_reset.inc();
    this.owner.onStreamDone(this, false);
  }

  /** Response backpressure: stop or restart reading from the upstream (each call a change). */
  readDisable(disable: boolean): void {
    const counters = this.cluster.stats.counters;
    if (disable) {
      counters.upstream_flow_control_paused_reading_total.inc();
      this.upstream.socket.pause();
    } else {
      counters.upstream_flow_control_resumed_reading_total.inc();
      this.upstream.socket.resume();
    }
  }

  close(): void {
    this.upstream.close();
  }

  localAddress(): string {
    return this.upstream.localAddress();
  }

  /**
   * Called by the pool as the connection goes idle: the cluster's idle_timeout runs from now.
   * The timer is enabled again, not remade, so a request costs no allocation; one that fires
   * while a request is under way is ignored, and enabled again when the connection is idle again.
   */
  markIdle(): void {
    if (this.cluster.idleTimeoutMs > 0) (this.idleTimer ??= this.clock.createTimer(this.onIdleTimeout)).enable(this.cluster.idleTimeoutMs);
  }

  private readonly onIdleTimeout = (): void => {
    if (this.stream !== null || this.draining) return;
    this.cluster.stats.counters.upstream_cx_idle_timeout.inc();
    this.draining = true;
    this.upstream.close();
  };

  /** max_connection_duration: no new request; an idle connection closes now, a busy one when its response ends. */
  private readonly onMaxDuration = (): void => {
    this.durationTimer = null;
    this.cluster.stats.counters.upstream_cx_max_duration_reached.inc();
    this.draining = true;
    if (this.stream === null) this.upstream.close();
  };

  private clearTimers(): void {
    this.idleTimer?.close();
    this.durationTimer?.close();
    this.idleTimer = this.durationTimer = null;
  }

  // ---- UpstreamConnectionCallbacks -------------------------------------------------------

  onConnected(): void {
    if (this.log.enabled('debug')) this.log.debug(`[C${this.id}] connected`);
    // As Envoy's pools, the connection's age counts from when it is established.
    const maxDuration = this.cluster.maxConnectionDurationMs;
    if (maxDuration > 0) {
      this.durationTimer = this.clock.createTimer(this.onMaxDuration);
      this.durationTimer.enable(maxDuration);
    }
    this.owner.onConnectionConnected(this);
  }

  onConnectFailure(reason: ConnectFailureReason): void {
    this.owner.onConnectionFailure(this, reason);
  }

  onData(chunk: Buffer): void {
    const stream = this.stream;
    if (stream === null) {
      // Nothing was asked: bytes on an idle connection are a protocol violation.
      this.protocolError();
      return;
    }
    try {
      this.parser.execute(chunk);
      if (this.responseComplete) this.finishResponse();
    } catch (e) {
      if (!(e instanceof CodecError)) throw e;
      this.protocolError();
    }
    stream.onUpstreamReadEnd();
  }

  onRemoteEnd(): void {
    try {
      this.parser.finish();
      if (this.responseComplete) this.finishResponse();
    } catch (e) {
      if (!(e instanceof CodecError)) throw e;
      this.reset('connection termination', true);
    }
    this.upstream.close();
  }

  onClosed(remote: boolean): void {
    if (this.log.enabled('debug')) this.log.debug(`[C${this.id}] disconnect. resetting ${this.stream === null ? 0 : 1} pending requests`);
    this.clearTimers();
    this.reset(remote ? 'connection termination' : 'local reset', remote);
    this.owner.onConnectionClosed(this);
  }

  onAboveWriteBufferHighWatermark(): void {
    this.cluster.stats.counters.upstream_flow_control_backed_up_total.inc();
  }

  onBelowWriteBufferLowWatermark(): void {
    this.cluster.stats.counters.upstream_flow_control_drained_total.inc();
    this.stream?.onUpstreamDrained();
  }

  // ---- ParserCallbacks ----------------------------------------------------------------------

  onMessageHead(head: ResponseHead): void {
    if (head.connectionClose) this.keepAlive = false;
    this.stream?.onUpstreamHead(head);
  }

  onMessageBody(chunk: Buffer): void {
    this.stream?.onUpstreamBody(chunk);
  }

  onMessageComplete(trailers: string[] | null): void {
    // The stream was reset from this response's own head or body callback: its end goes nowhere.
    if (this.stream === null) return;
    // Anything after the response is held, and judged once this input is consumed.
    this.parser.pause();
    this.responseComplete = true;
    this.responseTrailers = trailers;
  }

  // ---- internals -----------------------------------------------------------------------------

  private finishResponse(): void {
    if (this.log.enabled('debug')) this.log.debug(`[C${this.id}] response complete`);
    const stream = this.stream!;
    this.stream = null;
    this.responseComplete = false;
    // Bytes after a response that nobody asked for mean the upstream is out of step.
    const unsolicited = this.parser.bufferedBytes > 0;
    if (unsolicited) this.cluster.stats.counters.upstream_cx_protocol_error.inc();
    // An upstream that answered before the whole request was sent cannot take another one.
    const trailers = this.responseTrailers;
    this.responseTrailers = null;
    this.owner.onStreamDone(this, this.keepAlive && this.requestComplete && !unsolicited);
    stream.onUpstreamComplete(trailers);
  }

  /**
   * A response this codec cannot read (malformed, or over max_headers_count): as Envoy 1.16's
   * codec client, the connection closes and its request is reset as a connection termination.
   */
  private protocolError(): void {
    this.cluster.stats.counters.upstream_cx_protocol_error.inc();
    this.reset('connection termination', true);
    this.upstream.close();
  }

  /** Ends the attached stream, if any, with `reason`. */
  private reset(reason: StreamResetReason, remote: boolean): void {
    const stream = this.stream;
    if (stream === null) return;
    this.stream = null;
    this.responseComplete = false;
    if (remote) this.cluster.stats.counters.upstream_rq_rx_reset.inc();
    else this.cluster.stats.counters.upstream_rq_tx_reset.inc();
    this.owner.onStreamDone(this, false);
    stream.onUpstreamReset(reason);
  }
}
