// A virtual host's virtual clusters, as Envoy 1.16's VirtualHostImpl has them: a request belongs
// to the first whose header matchers all match it, and one that matches none to the virtual
// host's catch-all, `other`. Like Envoy 1.16, every virtual host has its catch-all's statistics,
// virtual clusters or not; only a virtual host with virtual clusters ever charges them.

import type { VirtualCluster } from '../../config/model';
import type { RequestHead } from '../../http/message';
import type { Scope } from '../../stats/stats';
import { HeaderMatcher, matchAll } from './header_matcher';
import { VirtualClusterStats } from './virtual_cluster_stats';

/** Envoy's name for the catch-all virtual cluster. */
export const CATCH_ALL_VIRTUAL_CLUSTER = 'other';

interface CompiledVirtualCluster {
  readonly matchers: readonly HeaderMatcher[];
  readonly stats: VirtualClusterStats;
}

export class VirtualClusters {
  private readonly entries: readonly CompiledVirtualCluster[];
  private readonly catchAll: VirtualClusterStats;

  /** @param scope `vhost.<virtual host name>.vcluster` */
  constructor(configs: readonly VirtualCluster[], scope: Scope) {
    this.entries = configs.map((config) => ({ matchers: config.headers.map((header) => new HeaderMatcher(header)), stats: new VirtualClusterStats(scope.scope(config.name)) }));
    this.catchAll = new VirtualClusterStats(scope.scope(CATCH_ALL_VIRTUAL_CLUSTER));
  }

  /** The statistics of the virtual cluster `head` belongs to. */
  match(head: RequestHead): VirtualClusterStats {
    for (const entry of this.entries) if (matchAll(entry.matchers, head)) return entry.stats;
    return this.catchAll;
  }
}
