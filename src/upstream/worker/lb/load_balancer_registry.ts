// The registry of load balancing policies this build runs, by lb_policy. The worker's clusters
// read it, and the extension registry's descriptors of the policies are made from it
// (src/extensions/load_balancers.ts): adding a policy touches this list.

import type { LbPolicy } from '../../../config/model';
import type { LoadBalancer } from './load_balancer';
import type { LoadBalancerParams } from './load_balancer_base';
import { LeastRequestLoadBalancer } from './least_request_lb';
import { MaglevLoadBalancer } from './maglev_lb';
import { RandomLoadBalancer } from './random_lb';
import { RingHashLoadBalancer } from './ring_hash_lb';
import { RoundRobinLoadBalancer } from './round_robin';

export interface LoadBalancerFactory {
  readonly policy: LbPolicy;
  /** A balancer ready to pick from `params.prioritySet` as it is now. */
  create(params: LoadBalancerParams): LoadBalancer;
}

/** A balancer class whose instances are refreshed once before their first pick. */
function factory(policy: LbPolicy, Balancer: new (params: LoadBalancerParams) => LoadBalancer): LoadBalancerFactory {
  return {
    policy,
    create(params) {
      const lb = new Balancer(params);
      lb.refresh();
      return lb;
    },
  };
}

export const LOAD_BALANCERS: ReadonlyMap<LbPolicy, LoadBalancerFactory> = new Map(
  [
    factory('ROUND_ROBIN', RoundRobinLoadBalancer),
    factory('LEAST_REQUEST', LeastRequestLoadBalancer),
    factory('RANDOM', RandomLoadBalancer),
    factory('RING_HASH', RingHashLoadBalancer),
    factory('MAGLEV', MaglevLoadBalancer),
  ].map((f) => [f.policy, f]),
);
