// The load balancing policies (lb_policy) as descriptors: the workers' registry of them
// (src/upstream/worker/lb/load_balancer_registry.ts) is their one list, so that the workers'
// balancers and the configuration pipeline (which policies a cluster may name) never disagree.

import type { ExtensionDescriptor } from '../config/extension';
import { LOAD_BALANCERS, type LoadBalancerFactory } from '../upstream/worker/lb/load_balancer_registry';

export function loadBalancers(): ExtensionDescriptor<'proxy.load_balancers', LoadBalancerFactory>[] {
  return [...LOAD_BALANCERS.values()].map((factory) => ({
    category: 'proxy.load_balancers',
    name: factory.policy,
    configType: null,
    // A policy's settings are fields of the Cluster (ring_hash_lb_config, ...), checked there.
    shape: { fields: {} },
    model: () => factory.policy,
    factory,
  }));
}
