// ORIGINAL_DST's balancer, in each worker (Envoy's OriginalDstCluster::LoadBalancer): the host is
// the request's destination, not a choice among members. With original_dst_lb_config.use_http_header
// the first `x-proxy-original-dst-host` value names it (an invalid one counts
// original_dst_host_invalid and is passed over); otherwise, or then, the downstream connection's
// local address does, once the original_dst listener filter restored it. A destination that is
// no host yet gets one at once (ClusterProvidedContext.hostFor), which the supervisor then adds
// to the membership of every worker.

import { parseIpAndPort, addressString } from '../../../network/socket_address';
import type { Host } from '../host';
import type { ClusterProvidedContext, ClusterProvidedLoadBalancerFactory } from './cluster_provided_lb';
import type { LoadBalancer, LoadBalancerContext } from './load_balancer';
import type { LoadBalancerParams } from './load_balancer_base';
import { PickReporter } from './pick_reporter';
import type { SocketAddress } from '../../../config/model';

/** The header that names the destination; Envoy's x-envoy-original-dst-host. */
export const ORIGINAL_DST_HOST_HEADER = 'x-proxy-original-dst-host';

export class OriginalDstLoadBalancer implements LoadBalancer {
  private readonly useHttpHeader: boolean;
  private readonly reporter: PickReporter;

  constructor(
    private readonly params: Pick<LoadBalancerParams, 'info'>,
    private readonly context: ClusterProvidedContext,
  ) {
    this.useHttpHeader = context.config.originalDstLbConfig.useHttpHeader;
    this.reporter = new PickReporter(context.config.cleanupIntervalMs, context.clock, context.reportPicked);
  }

  chooseHost(context: LoadBalancerContext | null): Host | null {
    if (context === null) return null;
    const destination = (this.useHttpHeader ? this.headerDestination(context) : null) ?? restoredDestination(context);
    if (destination === null) return null;
    const key = addressString(destination);
    const host = this.context.hostFor(destination);
    this.reporter.picked(key, destination);
    return host;
  }

  /** Membership changes reach hostFor through the cluster: the balancer keeps nothing of it. */
  refresh(): void {}

  private headerDestination(context: LoadBalancerContext): SocketAddress | null {
    const headers = context.downstreamHeaders?.headers;
    if (headers === undefined) return null;
    for (let i = 0; i < headers.length; i += 2) {
      if (headers[i] !== ORIGINAL_DST_HOST_HEADER) continue;
      // Untrusted: only the first value counts, as in Envoy.
      const destination = parseIpAndPort(headers[i + 1]!);
      if (destination === null) this.params.info.stats.counters.original_dst_host_invalid.inc();
      return destination;
    }
    return null;
  }
}

/** The connection's local address, when the original_dst listener filter restored it. */
function restoredDestination(context: LoadBalancerContext): SocketAddress | null {
  const downstream = context.downstream;
  if (downstream === null || downstream.localAddressRestored !== true) return null;
  const { localAddress, localPort } = downstream;
  if (localAddress === undefined || localPort === undefined) return null;
  return { address: localAddress, port: localPort };
}

export const ORIGINAL_DST_LB: ClusterProvidedLoadBalancerFactory = {
  clusterType: 'ORIGINAL_DST',
  create: (params: LoadBalancerParams, context: ClusterProvidedContext) => {
    const lb = new OriginalDstLoadBalancer(params, context);
    lb.refresh();
    return lb;
  },
};
