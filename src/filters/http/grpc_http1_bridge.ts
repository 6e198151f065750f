// proxy.filters.http.grpc_http1_bridge (Envoy 1.16's Http1BridgeFilter): a gRPC request over
// HTTP/1.x, whose client cannot read trailers, gets its response whole: the body held until the
// trailers come, then grpc-status and grpc-message as headers, status 503 unless grpc-status is 0,
// and Content-Length. A response without trailers goes on as it came. gRPC calls over any protocol
// are counted per service and method in `cluster.<name>.grpc.` (grpc_call_stats.ts).

import { isGrpc } from '../../http/grpc';
import { firstHeaderValue, type RequestHead, type ResponseHead, setHeader } from '../../http/message';
import type { Scope } from '../../stats/stats';
import type { ClusterManager } from '../../upstream/worker/cluster_manager';
import { GrpcCallStats } from './grpc_call_stats';
import { FilterDataStatus, FilterHeadersStatus, type HttpFilter, type HttpFilterCallbacks, type HttpFilterFactory } from './http_filter';

/** absl::SimpleAtoi's unsigned forms: optional spaces and plus sign around the digits. */
const UNSIGNED = /^\s*\+?\d+\s*$/;

export class GrpcHttp1BridgeFilterFactory implements HttpFilterFactory {
  readonly stats: GrpcCallStats;

  constructor(clusters: ClusterManager) {
    this.stats = new GrpcCallStats(clusters, 'grpc');
  }

  createFilter(callbacks: HttpFilterCallbacks): HttpFilter {
    return new GrpcHttp1BridgeFilter(this.stats, callbacks);
  }
}

class GrpcHttp1BridgeFilter implements HttpFilter {
  /** The response is held for its trailers; its head, when it came. */
  private bridging = false;
  private response: ResponseHead | null = null;
  /** The call's counters; null when not counted. */
  private calls: Scope | null = null;

  constructor(
    private readonly stats: GrpcCallStats,
    private readonly callbacks: HttpFilterCallbacks,
  ) {}

  decodeHeaders(head: RequestHead): FilterHeadersStatus {
    this.response = null;
    const grpc = isGrpc(head);
    this.calls = grpc ? this.stats.scopeOf(this.callbacks.route(), head) : null;
    this.bridging = grpc && this.callbacks.downstream.protocol === 'http1';
    return FilterHeadersStatus.Continue;
  }

  encodeHeaders(head: ResponseHead, endStream: boolean): FilterHeadersStatus {
    if (this.calls !== null) this.stats.charge(this.calls, firstHeaderValue(head.headers, 'grpc-status'));
    if (!this.bridging || endStream) return FilterHeadersStatus.Continue;
    this.response = head;
    return FilterHeadersStatus.StopIteration;
  }

  encodeData(): FilterDataStatus {
    return this.bridging ? FilterDataStatus.StopIterationAndBuffer : FilterDataStatus.Continue;
  }

  encodeComplete(trailers: string[] | null): FilterHeadersStatus {
    if (trailers === null || trailers.length === 0) return FilterHeadersStatus.Continue;
    const status = firstHeaderValue(trailers, 'grpc-status');
    if (this.calls !== null) this.stats.charge(this.calls, status);
    const head = this.response;
    if (head === null) return FilterHeadersStatus.Continue;
    const headers = head.headers;
    if (status !== undefined) {
      if (!UNSIGNED.test(status) || Number(status) !== 0) head.status = 503;
      setHeader(headers, 'grpc-status', status);
    }
    const message = firstHeaderValue(trailers, 'grpc-message');
    if (message !== undefined) setHeader(headers, 'grpc-message', message);
    // A whole body: HTTP/1.1 callers see by its length that it is complete. The trailers, sent
    // on, go nowhere on a body that is not chunked.
    head.contentLength = head.bodyLength = this.callbacks.encodingBuffer().length;
    return FilterHeadersStatus.Continue;
  }

  onStreamEnd(): void {
    this.response = null;
    this.calls = null;
  }
}
