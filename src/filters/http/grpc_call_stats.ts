// Envoy 1.16's per-call gRPC counters (Grpc::ContextImpl::chargeStat), which the gRPC-Web filter
// and the gRPC HTTP/1.1 bridge charge to the request's cluster: under
// `cluster.<name>.<grpc|grpc-web>.<service>.<method>.`, one counter per grpc-status value seen,
// `success` (status 0) or `failure`, and `total`. Made as they are met, as Envoy's are.

import { grpcCallName } from '../../http/grpc';
import type { RequestHead } from '../../http/message';
import type { Scope } from '../../stats/stats';
import type { ClusterManager } from '../../upstream/worker/cluster_manager';
import { type RouteEntry, routeClusterName } from './http_filter';

export class GrpcCallStats {
  /** @param protocol the counters' first name: `grpc` (bridge) or `grpc-web` */
  constructor(
    private readonly clusters: ClusterManager,
    private readonly protocol: 'grpc' | 'grpc-web',
  ) {}

  /**
   * The scope of a request's counters: null when its route names no cluster this worker knows,
   * or its path no service and method, as Envoy tracks nothing then.
   */
  scopeOf(entry: RouteEntry | null, head: RequestHead): Scope | null {
    if (entry === null) return null;
    const cluster = this.clusters.get(routeClusterName(entry, head));
    const call = grpcCallName(head.path);
    if (cluster === undefined || call === null) return null;
    return cluster.info.statsScope().scope(`${this.protocol}.${call.service}.${call.method}`);
  }

  /** Charges the grpc-status of a response head or trailers; a response without one is charged nothing. */
  charge(scope: Scope, status: string | undefined): void {
    if (status === undefined) return;
    scope.counter(status).inc();
    scope.counter(status === '0' ? 'success' : 'failure').inc();
    scope.counter('total').inc();
  }
}
