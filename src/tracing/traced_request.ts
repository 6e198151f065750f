// One request's span as the connection manager keeps it (Envoy's active span and decorated
// operation): the operation name a decorator propagates on the response, and, when the stream
// ends, the tags Envoy 1.16 sets (HttpTracerUtility::finalizeDownstreamSpan) before the span
// finishes.

import { isGrpc } from '../http/grpc';
import { firstHeaderValue, type RequestHead, type ResponseHead, removeHeaders, setHeader } from '../http/message';
import { forwardedProtoOf } from '../http/trusted_client';
import { responseFlagsString } from '../stream_info/response_flag_names';
import { NOT_YET, type StreamInfo } from '../stream_info/stream_info';
import type { CustomTag } from './custom_tags';
import type { OperationName, Span } from './tracer';

/** Envoy's x-envoy-decorator-operation. */
export const DECORATOR_OPERATION = 'x-proxy-decorator-operation';

/** What a connection manager's spans are finished with. */
export interface SpanSettings {
  readonly operation: OperationName;
  /** Log the stream's timing events on the span. */
  readonly verbose: boolean;
  readonly maxPathTagLength: number;
  /** How the http.url tag's scheme is read (forwardedProtoOf). */
  readonly useRemoteAddress: boolean;
}

/** The StreamInfo timings Envoy logs on a verbose span, by their log names. */
const TIMINGS: readonly (readonly [string, (info: StreamInfo) => number])[] = [
  ['last_downstream_rx_byte_received', (info) => info.lastDownstreamRxByteReceived],
  ['first_upstream_tx_byte_sent', (info) => info.firstUpstreamTxByteSent],
  ['last_upstream_tx_byte_sent', (info) => info.lastUpstreamTxByteSent],
  ['first_upstream_rx_byte_received', (info) => info.firstUpstreamRxByteReceived],
  ['last_upstream_rx_byte_received', (info) => info.lastUpstreamRxByteReceived],
  ['first_downstream_tx_byte_sent', (info) => info.firstDownstreamTxByteSent],
  ['last_downstream_tx_byte_sent', (info) => info.lastDownstreamTxByteSent],
];

export class TracedRequest {
  /**
   * @param span null for a request its tracer has no span for (no tracer, or a malformed context)
   * @param startedMs info.sinceStart() when the span started
   * @param responseOperation the operation an ingress response names in x-proxy-decorator-operation; null: none
   */
  constructor(
    private readonly settings: SpanSettings,
    private readonly span: Span | null,
    private readonly startedMs: number,
    private readonly tags: readonly CustomTag[],
    private readonly responseOperation: string | null,
    private readonly peerAddress: string,
  ) {}

  /**
   * The response head about to be sent: an ingress response names the decorated operation; an
   * egress response's own x-proxy-decorator-operation names the span and goes no further.
   */
  onResponseHeaders(headers: string[]): void {
    if (this.settings.operation === 'ingress') {
      if (this.responseOperation !== null) setHeader(headers, DECORATOR_OPERATION, this.responseOperation);
      return;
    }
    const operation = firstHeaderValue(headers, DECORATOR_OPERATION);
    if (operation === undefined) return;
    if (operation !== '') this.span?.setOperation(operation);
    removeHeaders(headers, (name) => name === DECORATOR_OPERATION);
  }

  /**
   * The stream ended: the span is tagged and finished.
   * @param request the head as routed upstream, else as received; null when none came
   */
  finish(request: RequestHead | null, response: ResponseHead | null, trailers: readonly string[] | null, info: StreamInfo): void {
    const span = this.span;
    if (span === null) return;
    if (request !== null) this.tagRequest(span, request, info);
    for (const tag of this.tags) span.setTag(tag.tag, tag.value(request === null ? null : request.headers));
    span.setTag('request_size', String(info.bytesReceived));
    span.setTag('response_size', String(info.bytesSent));
    span.setTag('component', 'proxy');
    if (info.upstreamHost !== null && info.upstreamCluster !== null) span.setTag('upstream_cluster', info.upstreamCluster);
    span.setTag('http.status_code', String(info.responseCode));
    span.setTag('response_flags', responseFlagsString(info.responseFlags));
    const grpcStatus = trailers === null ? undefined : firstHeaderValue(trailers, 'grpc-status');
    if (grpcStatus !== undefined) tagGrpcResponse(span, trailers!);
    else if (response !== null && firstHeaderValue(response.headers, 'grpc-status') !== undefined) tagGrpcResponse(span, response.headers);
    if (this.settings.verbose) logTimings(span, info);
    if (info.responseCode === 0 || info.responseCode >= 500) span.setTag('error', 'true');
    span.finish((info.sinceStart() - this.startedMs) * 1000);
  }

  private tagRequest(span: Span, request: RequestHead, info: StreamInfo): void {
    const headers = request.headers;
    span.setTag('guid:x-request-id', firstHeaderValue(headers, 'x-request-id') ?? '');
    span.setTag('http.url', this.url(request));
    span.setTag('http.method', request.method);
    span.setTag('downstream_cluster', firstHeaderValue(headers, 'x-proxy-downstream-service-cluster') ?? '-');
    span.setTag('user_agent', firstHeaderValue(headers, 'user-agent') ?? '-');
    span.setTag('http.protocol', info.protocol ?? '-');
    span.setTag('peer.address', this.peerAddress);
    span.setTag('guid:x-client-trace-id', firstHeaderValue(headers, 'x-client-trace-id') ?? '');
    if (isGrpc(request)) {
      span.setTag('grpc.path', request.path);
      span.setTag('grpc.authority', request.authority);
      span.setTag('grpc.content_type', firstHeaderValue(headers, 'content-type') ?? '');
      span.setTag('grpc.timeout', firstHeaderValue(headers, 'grpc-timeout') ?? '');
    }
  }

  /** Envoy's buildUrl: scheme, host and the path as the client sent it, cut to max_path_tag_length. */
  private url(request: RequestHead): string {
    if (request.path === '') return '';
    const scheme = forwardedProtoOf(request, this.settings.useRemoteAddress);
    const path = firstHeaderValue(request.headers, 'x-proxy-original-path') ?? request.path;
    return `${scheme}://${request.authority}${path.slice(0, this.settings.maxPathTagLength)}`;
  }
}

/** grpc.status_code and grpc.message from the response's trailers or head; error unless the status is OK (0). */
function tagGrpcResponse(span: Span, headers: readonly string[]): void {
  const status = firstHeaderValue(headers, 'grpc-status')!;
  span.setTag('grpc.status_code', status);
  span.setTag('grpc.message', firstHeaderValue(headers, 'grpc-message') ?? '');
  if (!/^\d+$/.test(status) || Number(status) !== 0) span.setTag('error', 'true');
}

/** Each stream event that happened, at its time since the epoch. */
function logTimings(span: Span, info: StreamInfo): void {
  for (const [event, at] of TIMINGS) {
    const ms = at(info);
    if (ms !== NOT_YET) span.log((info.startTime + ms) * 1000, event);
  }
}
