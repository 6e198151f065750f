// The gRPC check (Envoy's GrpcHealthCheckerImpl): grpc.health.v1.Health/Check over HTTP/2 with
// prior knowledge. SERVING is healthy; any other status, a non-200 answer, a gRPC error or a
// malformed message is an active failure; a reset or lost connection is a network failure.

import { connect, constants, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders } from 'node:http2';
import { ACTIVE_FAILURE, HEALTHY, type HealthProbe, NETWORK_FAILURE, type ProbeTarget } from './health_probe';
import type { CheckOutcome } from './verdict';
import { grpcFrame, grpcMessages } from '../../../http/grpc_frame';

const CHECK_PATH = '/grpc.health.v1.Health/Check';
/** HealthCheckResponse.ServingStatus.SERVING. */
const SERVING = 1;
/** A health answer is a few bytes; more is not one. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/** A length-prefixed gRPC message holding HealthCheckRequest { service = 1 }. */
export function grpcCheckRequest(serviceName: string): Buffer {
  const service = Buffer.from(serviceName, 'utf8');
  return grpcFrame(service.length === 0 ? Buffer.alloc(0) : Buffer.concat([Buffer.from([0x0a]), varint(service.length), service]));
}

function varint(n: number): Buffer {
  const bytes: number[] = [];
  while (n > 0x7f) {
    bytes.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  bytes.push(n);
  return Buffer.from(bytes);
}

/**
 * The ServingStatus in a response body holding exactly one uncompressed HealthCheckResponse
 * message, or null when the body is not that. Unknown fields are skipped, as protobuf does.
 */
export function servingStatus(body: Buffer): number | null {
  const messages = grpcMessages(body);
  if (messages === null || messages.length !== 1) return null;
  const message = messages[0]!;
  let status = 0;
  let pos = 0;
  const readVarint = (): number | null => {
    let value = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (pos >= message.length) return null;
      const byte = message[pos++]!;
      value += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) return value;
    }
    return null;
  };
  while (pos < message.length) {
    const tag = readVarint();
    if (tag === null) return null;
    const wireType = tag & 7;
    if (wireType === 0) {
      const value = readVarint();
      if (value === null) return null;
      if (tag >>> 3 === 1) status = value;
    } else if (wireType === 2) {
      const length = readVarint();
      if (length === null || pos + length > message.length) return null;
      pos += length;
    } else if (wireType === 1 || wireType === 5) {
      pos += wireType === 1 ? 8 : 4;
      if (pos > message.length) return null;
    } else {
      return null;
    }
  }
  return status;
}

export class GrpcProbe implements HealthProbe {
  private session: ClientHttp2Session | null = null;
  private stream: ClientHttp2Stream | null = null;
  private done: ((outcome: CheckOutcome) => void) | null = null;

  constructor(
    private readonly target: ProbeTarget,
    private readonly authority: string,
    private readonly request: Buffer,
    private readonly reuseConnection: boolean,
  ) {}

  check(done: (outcome: CheckOutcome) => void): void {
    this.done = done;
    const session = this.session !== null && !this.session.closed && !this.session.destroyed ? this.session : this.connect();
    let stream: ClientHttp2Stream;
    try {
      stream = session.request({
        [constants.HTTP2_HEADER_METHOD]: 'POST',
        [constants.HTTP2_HEADER_PATH]: CHECK_PATH,
        [constants.HTTP2_HEADER_AUTHORITY]: this.authority,
        [constants.HTTP2_HEADER_SCHEME]: this.scheme(),
        'content-type': 'application/grpc',
        te: 'trailers',
      });
    } catch {
      // The session went away under us (a GOAWAY not yet seen): a network failure, reported later as any other.
      this.disconnect();
      queueMicrotask(() => {
        if (this.done === done) {
          this.done = null;
          done(NETWORK_FAILURE);
        }
      });
      return;
    }
    this.stream = stream;
    let headers: IncomingHttpHeaders = {};
    let trailers: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    let bytes = 0;
    stream.on('response', (h) => (headers = h));
    stream.on('trailers', (t) => (trailers = t));
    stream.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > MAX_RESPONSE_BYTES) return this.finish(stream, ACTIVE_FAILURE);
      chunks.push(chunk);
    });
    stream.on('end', () => this.finish(stream, outcome(headers, trailers, Buffer.concat(chunks))));
    stream.on('error', () => this.finish(stream, NETWORK_FAILURE));
    stream.on('close', () => this.finish(stream, NETWORK_FAILURE));
    stream.end(this.request);
  }

  abort(): void {
    this.done = null;
    this.disconnect();
  }

  close(): void {
    this.abort();
  }

  private scheme(): string {
    return this.target.connector.name === 'tls' ? 'https' : 'http';
  }

  private connect(): ClientHttp2Session {
    const { address, connector } = this.target;
    const host = address.address.includes(':') ? `[${address.address}]` : address.address;
    // node:http2 starts the session at the socket's connect (TLS: secureConnect), after the
    // connector's own listener has verified the peer, so nothing is sent to a refused one.
    const session = connect(`${this.scheme()}://${host}:${address.port}`, {
      createConnection: () => connector.connect({ host: address.address, port: address.port, allowHalfOpen: false, alpn: ['h2'] }),
    });
    this.session = session;
    session.on('error', () => {});
    session.on('goaway', () => {
      if (this.session === session) this.session = null;
    });
    session.on('close', () => {
      if (this.session === session) this.session = null;
    });
    return session;
  }

  /** The first of a stream's endings decides its check. */
  private finish(stream: ClientHttp2Stream, result: CheckOutcome): void {
    if (this.stream !== stream) return;
    this.stream = null;
    const done = this.done;
    this.done = null;
    if (result === NETWORK_FAILURE || !this.reuseConnection) this.disconnect();
    else if (!stream.closed) stream.close();
    done?.(result);
  }

  private disconnect(): void {
    const stream = this.stream;
    this.stream = null;
    stream?.close(constants.NGHTTP2_CANCEL);
    this.session?.destroy();
    this.session = null;
  }
}

/** A finished call's outcome: HTTP 200, grpc-status 0 (trailers, or a trailers-only answer) and SERVING. */
function outcome(headers: IncomingHttpHeaders, trailers: IncomingHttpHeaders, body: Buffer): CheckOutcome {
  if (Number(headers[constants.HTTP2_HEADER_STATUS]) !== 200) return ACTIVE_FAILURE;
  const grpcStatus = trailers['grpc-status'] ?? headers['grpc-status'];
  if (grpcStatus !== '0') return ACTIVE_FAILURE;
  return servingStatus(body) === SERVING ? HEALTHY : ACTIVE_FAILURE;
}
