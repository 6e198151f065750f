// What is known of one stream (an HTTP request and its response, or a TCP proxy connection) as
// it runs: Envoy's StreamInfo. The connection manager, the router and tcp_proxy fill it in; access
// loggers read it when the stream ends. One object per stream, reset and reused on an HTTP/1
// connection, so that a stream nobody logs costs a few field writes.

import type { Clock } from '../common/clock';
import type { RequestHead } from '../http/message';
import type { TrustedClient } from '../http/trusted_client';
import type { ResponseFlag } from './response_flags';

/** The downstream connection a stream came on: fixed for the connection's life. */
export interface DownstreamConnectionInfo {
  /** The connection's id, as log lines print it (`[C<id>]`). */
  readonly id: number;
  /** `ip:port` the client connected to (after original_dst, the original destination). */
  readonly localAddress: string;
  /** `ip:port` of the peer, as the socket (or the PROXY protocol) says. */
  readonly directRemoteAddress: string;
  /** The TLS SNI the client sent; null without TLS or SNI. */
  readonly requestedServerName: string | null;
  /** The TLS session; null on a plaintext connection. */
  readonly ssl: SslConnectionInfo | null;
}

/** What a TLS session tells about the peer and ourselves, read when a log line asks for it. */
export interface SslConnectionInfo {
  /** The client sent a certificate. */
  readonly peerCertificatePresented: boolean;
  /** The client's certificate was verified against the listener's validation context. */
  readonly peerCertificateValidated: boolean;
  readonly peerSubject: string | null;
  readonly peerIssuer: string | null;
  readonly peerUriSans: readonly string[];
  readonly peerDnsSans: readonly string[];
  readonly peerSerial: string | null;
  /** Hex SHA-256 of the peer certificate's DER, lower case. */
  readonly peerFingerprint256: string | null;
  /** Hex SHA-1 of the peer certificate's DER, lower case. */
  readonly peerFingerprint1: string | null;
  /** URL-encoded PEM of the peer certificate. */
  readonly peerCertificatePem: string | null;
  readonly peerValidFrom: Date | null;
  readonly peerExpiration: Date | null;
  readonly localSubject: string | null;
  readonly localUriSans: readonly string[];
  readonly localDnsSans: readonly string[];
  /** e.g. `TLSv1.3`. */
  readonly tlsVersion: string | null;
  /** The OpenSSL name, e.g. `ECDHE-RSA-AES128-GCM-SHA256` (TLS 1.3: `TLS_AES_128_GCM_SHA256`). */
  readonly cipherSuite: string | null;
  /** Hex session id. */
  readonly sessionId: string | null;
}

/** Sentinel of the timing fields: the event did not happen (yet). */
export const NOT_YET = -1;

export class StreamInfo {
  /** Wall-clock start, Date.now(): START_TIME. */
  startTime = 0;
  /** The clock's eventNow() at the start: the timing fields below count from it. */
  startMonotonic = 0;

  // Milliseconds since startMonotonic (fractional), NOT_YET until it happens.
  lastDownstreamRxByteReceived = NOT_YET;
  firstUpstreamTxByteSent = NOT_YET;
  lastUpstreamTxByteSent = NOT_YET;
  firstUpstreamRxByteReceived = NOT_YET;
  lastUpstreamRxByteReceived = NOT_YET;
  firstDownstreamTxByteSent = NOT_YET;
  lastDownstreamTxByteSent = NOT_YET;
  /** The stream ended: DURATION. */
  requestComplete = NOT_YET;

  /** The status sent downstream; 0 when none was. */
  responseCode = 0;
  /** Envoy's response code details (`via_upstream`, `route_not_found`, ...); null when unset. */
  responseCodeDetails: string | null = null;
  /** Why the proxy closed the downstream connection, when it did; null otherwise. */
  connectionTerminationDetails: string | null = null;
  /** ResponseFlag bits. */
  responseFlags = 0;
  /** Body bytes received from downstream (TCP: all bytes). */
  bytesReceived = 0;
  /** Body bytes sent downstream (TCP: all bytes). */
  bytesSent = 0;

  /** `HTTP/1.0`, `HTTP/1.1` or `HTTP/2`; null for TCP. */
  protocol: string | null = null;
  /** `ip:port` of the upstream host picked last; null when none was. */
  upstreamHost: string | null = null;
  upstreamCluster: string | null = null;
  /** `ip:port` of our side of the upstream connection. */
  upstreamLocalAddress: string | null = null;
  upstreamTransportFailureReason: string | null = null;
  /**
   * The request head as the router sent it upstream; null when it routed none. Envoy's router
   * edits the request's own header map, so its access logs read these headers: x-forwarded-for
   * as appended, the rewritten path and host, the x-proxy-* headers the router set.
   */
  forwardedRequest: RequestHead | null = null;
  /** The matched route's name; null when no route (or an unnamed one) matched. */
  routeName: string | null = null;
  /**
   * The request's trusted client (use_remote_address, xff_num_trusted_hops), as the connection
   * manager decided it; null for the direct peer (tcp_proxy, or a stream that never had a head).
   */
  trustedClient: TrustedClient | null = null;
  /** The health_check filter answered or passed this request as a health check. */
  healthCheck = false;
  /** Dynamic metadata by filter namespace; null until a filter sets some. */
  dynamicMetadata: Map<string, Record<string, unknown>> | null = null;

  constructor(
    /** Set again when an HTTP/1 stream, pooled, serves another connection. */
    public connection: DownstreamConnectionInfo,
    private readonly clock: Clock,
  ) {}

  /** A new stream on the same connection begins now. */
  start(): void {
    this.startTime = Date.now();
    this.startMonotonic = this.clock.eventNow();
    this.lastDownstreamRxByteReceived = NOT_YET;
    this.firstUpstreamTxByteSent = NOT_YET;
    this.lastUpstreamTxByteSent = NOT_YET;
    this.firstUpstreamRxByteReceived = NOT_YET;
    this.lastUpstreamRxByteReceived = NOT_YET;
    this.firstDownstreamTxByteSent = NOT_YET;
    this.lastDownstreamTxByteSent = NOT_YET;
    this.requestComplete = NOT_YET;
    this.responseCode = 0;
    this.responseCodeDetails = null;
    this.connectionTerminationDetails = null;
    this.responseFlags = 0;
    this.bytesReceived = 0;
    this.bytesSent = 0;
    this.upstreamHost = null;
    this.upstreamCluster = null;
    this.upstreamLocalAddress = null;
    this.upstreamTransportFailureReason = null;
    this.routeName = null;
    this.forwardedRequest = null;
    this.trustedClient = null;
    this.healthCheck = false;
    this.dynamicMetadata = null;
  }

  setResponseFlag(flag: ResponseFlag): void {
    this.responseFlags |= flag;
  }

  hasResponseFlag(flag: ResponseFlag): boolean {
    return (this.responseFlags & flag) !== 0;
  }

  /** Milliseconds since the stream started, for the timing fields. */
  sinceStart(): number {
    return this.clock.eventNow() - this.startMonotonic;
  }
}
