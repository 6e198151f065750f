// A gRPC unary call to an envoy_grpc service (Envoy's Grpc::AsyncClient send() over its async
// stream): one message POSTed to /<service>/<method> on the service's cluster through the async
// client, the answer one message or a gRPC status; what ext_authz and the rate limit filter call
// their services with. The cluster should speak HTTP/2 (http2_protocol_options), as gRPC needs
// trailers. As in Envoy 1.16: a cluster that is gone is UNAVAILABLE `Cluster not available`; a
// non-200 answer without a gRPC status is CANCELLED; an answer that ends without one is UNKNOWN;
// a reset, a malformed body or no message is INTERNAL; what the router would answer itself (no
// host, the timeout) comes as its gRPC status (UNAVAILABLE).

import { GrpcStatus, decodeGrpcMessage } from '../../http/grpc';
import { grpcFrame, grpcMessages } from '../../http/grpc_frame';
import { formatGrpcTimeout } from '../../http/grpc_timeout';
import { firstHeaderValue, RequestHead } from '../../http/message';
import type { AsyncClient, AsyncRequest, AsyncRequestCallbacks, AsyncResponse } from './async_client';
import type { ClusterManager } from './cluster_manager';

/** A grpc_service with envoy_grpc: its cluster_name, and its timeout (0: none). */
export interface GrpcService {
  readonly clusterName: string;
  readonly timeoutMs: number;
  /** initial_metadata: headers every call carries, [name, value, ...]; absent: none. */
  readonly initialMetadata?: readonly string[];
}

export interface GrpcUnaryCallbacks {
  /** The answer's message (its last, should the service send several). */
  onSuccess(message: Buffer): void;
  /** @param status the gRPC status, never OK; `message` its grpc-message, decoded */
  onFailure(status: number, message: string): void;
}

export class GrpcUnaryClient {
  constructor(
    private readonly clusters: ClusterManager,
    private readonly client: AsyncClient,
    private readonly service: GrpcService,
  ) {}

  /**
   * Calls `method` (`package.Service/Method`) with `request`, a serialized message. The callbacks
   * may run before this returns, which then returns null.
   */
  send(method: string, request: Buffer, callbacks: GrpcUnaryCallbacks): AsyncRequest | null {
    const { clusterName, timeoutMs, initialMetadata } = this.service;
    const cluster = this.clusters.get(clusterName);
    if (cluster === undefined) {
      callbacks.onFailure(GrpcStatus.Unavailable, 'Cluster not available');
      return null;
    }
    const head = new RequestHead('POST', `/${method}`, false);
    head.authority = clusterName;
    const body = grpcFrame(request);
    head.contentLength = head.bodyLength = body.length;
    head.headers.push('content-type', 'application/grpc', 'te', 'trailers');
    if (timeoutMs > 0) head.headers.push('grpc-timeout', formatGrpcTimeout(timeoutMs));
    if (initialMetadata !== undefined) head.headers.push(...initialMetadata);
    return this.client.send(cluster, head, [body], null, new UnaryAnswer(callbacks), { timeoutMs, keepResponseBody: true });
  }
}

/** The HTTP response of one call, read as gRPC. */
class UnaryAnswer implements AsyncRequestCallbacks {
  constructor(private readonly callbacks: GrpcUnaryCallbacks) {}

  onSuccess({ head, body, trailers }: AsyncResponse): void {
    // Trailers-only: the status comes in the head of an answer without a body.
    const trailersOnly = trailers === null && body.length === 0 && firstHeaderValue(head.headers, 'grpc-status') !== undefined;
    if (head.status !== 200 && !trailersOnly) {
      this.callbacks.onFailure(GrpcStatus.Canceled, '');
      return;
    }
    const closing = trailersOnly ? head.headers : trailers;
    const status = closing === null ? GrpcStatus.Unknown : statusOf(firstHeaderValue(closing, 'grpc-status'));
    if (status !== GrpcStatus.Ok) {
      this.callbacks.onFailure(status, decodeGrpcMessage(closing === null ? '' : (firstHeaderValue(closing, 'grpc-message') ?? '')));
      return;
    }
    const messages = grpcMessages(body);
    if (messages === null || messages.length === 0) this.callbacks.onFailure(GrpcStatus.Internal, '');
    else this.callbacks.onSuccess(messages[messages.length - 1]!);
  }

  onFailure(): void {
    this.callbacks.onFailure(GrpcStatus.Internal, '');
  }
}

/** grpc-status as a code; a missing or unreadable one is UNKNOWN. */
function statusOf(value: string | undefined): number {
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : GrpcStatus.Unknown;
}
