// proxy.filters.http.grpc_web (Envoy 1.16's GrpcWebFilter): a gRPC-Web request
// (application/grpc-web, -web+proto, -web-text, -web-text+proto) goes upstream as gRPC:
// content-type application/grpc, te: trailers, grpc-accept-encoding when it has none, no
// Content-Length, and a -web-text body decoded from base64. Its response comes back as
// application/grpc-web+proto, or -web-text+proto (each frame base64 on its own) when the request's
// Accept asked for text; the response's trailers become a trailer frame at the end of the body.
// Calls are counted per service and method in `cluster.<name>.grpc-web.` (grpc_call_stats.ts).

import { BODY_CHUNKED, firstHeaderValue, hasHeader, type RequestHead, type ResponseHead, setHeader } from '../../http/message';
import type { Scope } from '../../stats/stats';
import type { ClusterManager } from '../../upstream/worker/cluster_manager';
import { GrpcCallStats } from './grpc_call_stats';
import { Base64Decoder, GrpcFrameReader, trailerFrame } from './grpc_web_frames';
import { FilterDataStatus, FilterHeadersStatus, type HttpFilter, type HttpFilterCallbacks, type HttpFilterFactory } from './http_filter';

const GRPC_WEB = 'application/grpc-web';
const GRPC_WEB_PROTO = 'application/grpc-web+proto';
const GRPC_WEB_TEXT = 'application/grpc-web-text';
const GRPC_WEB_TEXT_PROTO = 'application/grpc-web-text+proto';
/** What Envoy 1.16 offers upstream when the client names no grpc-accept-encoding. */
const DEFAULT_GRPC_ACCEPT_ENCODING = 'identity,deflate,gzip';
const BAD_BASE64 = 'Bad gRPC-web request, invalid base64 data.';

export class GrpcWebFilterFactory implements HttpFilterFactory {
  readonly stats: GrpcCallStats;
  readonly makesGrpcRequests = true;

  constructor(clusters: ClusterManager) {
    this.stats = new GrpcCallStats(clusters, 'grpc-web');
  }

  createFilter(callbacks: HttpFilterCallbacks): HttpFilter {
    return new GrpcWebFilter(this.stats, callbacks);
  }
}

function isText(contentType: string | undefined): boolean {
  return contentType === GRPC_WEB_TEXT || contentType === GRPC_WEB_TEXT_PROTO;
}

class GrpcWebFilter implements HttpFilter {
  private grpcWeb = false;
  /** The request body is base64 text, decoded by this; null for binary. */
  private decoder: Base64Decoder | null = null;
  /** The response body goes back as base64 text, its frames read by this; null for binary. */
  private frames: GrpcFrameReader | null = null;
  /** The call's counters; null when not counted. */
  private calls: Scope | null = null;

  constructor(
    private readonly stats: GrpcCallStats,
    private readonly callbacks: HttpFilterCallbacks,
  ) {}

  decodeHeaders(head: RequestHead, endStream: boolean): FilterHeadersStatus {
    this.decoder = null;
    this.frames = null;
    this.calls = null;
    const headers = head.headers;
    const contentType = firstHeaderValue(headers, 'content-type');
    this.grpcWeb =
      head.path !== '' && (contentType === GRPC_WEB || contentType === GRPC_WEB_PROTO || contentType === GRPC_WEB_TEXT || contentType === GRPC_WEB_TEXT_PROTO);
    if (!this.grpcWeb) return FilterHeadersStatus.Continue;
    // The HTTP/1.1 body length is not the length of what goes upstream.
    head.contentLength = -1;
    if (!endStream) head.bodyLength = BODY_CHUNKED;
    this.calls = this.stats.scopeOf(this.callbacks.route(), head);
    if (isText(contentType)) this.decoder = new Base64Decoder();
    setHeader(headers, 'content-type', 'application/grpc');
    if (isText(firstHeaderValue(headers, 'accept'))) this.frames = new GrpcFrameReader();
    setHeader(headers, 'te', 'trailers');
    if (!hasHeader(headers, 'grpc-accept-encoding')) headers.push('grpc-accept-encoding', DEFAULT_GRPC_ACCEPT_ENCODING);
    return FilterHeadersStatus.Continue;
  }

  decodeData(chunk: Buffer): FilterDataStatus {
    const decoder = this.decoder;
    if (decoder === null) return FilterDataStatus.Continue;
    const decoded = decoder.decode(chunk);
    if (decoded === null) {
      this.callbacks.sendLocalReply(400, BAD_BASE64, undefined, 'grpc_base_64_decode_failed');
      return FilterDataStatus.StopIterationNoBuffer;
    }
    if (decoded.length > 0) this.callbacks.injectDecodedData(decoded);
    return FilterDataStatus.StopIterationNoBuffer;
  }

  decodeComplete(): FilterHeadersStatus {
    const decoder = this.decoder;
    if (decoder === null || decoder.leftover === 0) return FilterHeadersStatus.Continue;
    // Padding is mandatory: a body that ends short of a group of four is no base64.
    this.callbacks.sendLocalReply(400, BAD_BASE64, undefined, 'grpc_base_64_decode_failed_bad_size');
    return FilterHeadersStatus.StopIteration;
  }

  encodeHeaders(head: ResponseHead, endStream: boolean): FilterHeadersStatus {
    if (!this.grpcWeb) return FilterHeadersStatus.Continue;
    const headers = head.headers;
    if (this.calls !== null) this.stats.charge(this.calls, firstHeaderValue(headers, 'grpc-status'));
    if (!endStream) {
      // The body gains the trailer frame (and may become text): its length is no longer known.
      head.contentLength = -1;
      head.bodyLength = BODY_CHUNKED;
    }
    setHeader(headers, 'content-type', this.frames === null ? GRPC_WEB_PROTO : GRPC_WEB_TEXT_PROTO);
    return FilterHeadersStatus.Continue;
  }

  encodeData(chunk: Buffer): FilterDataStatus {
    const frames = this.frames;
    if (!this.grpcWeb || frames === null) return FilterDataStatus.Continue;
    for (const frame of frames.frames(chunk)) this.callbacks.injectEncodedData(Buffer.from(frame.toString('base64'), 'latin1'));
    return FilterDataStatus.StopIterationNoBuffer;
  }

  encodeComplete(trailers: string[] | null): FilterHeadersStatus {
    if (!this.grpcWeb || trailers === null || trailers.length === 0) return FilterHeadersStatus.Continue;
    if (this.calls !== null) this.stats.charge(this.calls, firstHeaderValue(trailers, 'grpc-status'));
    const frame = trailerFrame(trailers);
    // In the body now: none go out as trailers.
    trailers.length = 0;
    this.callbacks.injectEncodedData(this.frames === null ? frame : Buffer.from(frame.toString('base64'), 'latin1'));
    return FilterHeadersStatus.Continue;
  }

  onStreamEnd(): void {
    this.decoder = null;
    this.frames = null;
    this.calls = null;
  }
}
