// Envoy 1.16's RANDOM load balancer (RandomLoadBalancer): a uniform pick among the hosts the
// base leaves it, `hosts[random % n]`. Endpoint weights play no part in 1.16 (weighted random
// came in later releases); priorities, panic and degraded hosts do, through the base.

import type { Host } from '../host';
import type { LoadBalancerContext } from './load_balancer';
import { LoadBalancerBase } from './load_balancer_base';

export class RandomLoadBalancer extends LoadBalancerBase {
  protected chooseHostOnce(context: LoadBalancerContext | null): Host | null {
    const source = this.hostSourceToUse(context);
    if (source === null) return null;
    const hosts = this.hostSourceToHosts(source);
    return hosts.length === 0 ? null : hosts[this.random() % hosts.length];
  }
}
