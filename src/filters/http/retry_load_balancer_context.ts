// The load balancer context of a request that may retry: the route's own context, plus the
// previous_hosts predicate (Envoy's retry_host_predicate) over the hosts its tries used, and
// host_selection_retry_max_attempts extra picks to get away from them.

import type { RequestHead } from '../../http/message';
import type { Host } from '../../upstream/worker/host';
import type { LoadBalancerContext } from '../../upstream/worker/lb/load_balancer';
import type { MetadataMatchCriteria } from '../../config/metadata_match';
import type { DownstreamAddresses } from '../../network/downstream_addresses';

export class RetryLoadBalancerContext implements LoadBalancerContext {
  /** The hosts tried so far, in order. */
  readonly attempted: Host[] = [];

  constructor(
    private readonly route: LoadBalancerContext,
    private readonly avoidPreviousHosts: boolean,
    readonly hostSelectionRetryCount: number,
  ) {}

  get hashKey(): bigint | null {
    return this.route.hashKey;
  }

  get metadataMatch(): MetadataMatchCriteria | null {
    return this.route.metadataMatch;
  }

  get downstream(): DownstreamAddresses | null {
    return this.route.downstream;
  }

  get downstreamHeaders(): RequestHead | null {
    return this.route.downstreamHeaders ?? null;
  }

  shouldSelectAnotherHost(host: Host): boolean {
    return this.avoidPreviousHosts && this.attempted.includes(host);
  }
}
