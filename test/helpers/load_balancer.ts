// Load balancers over hand-made hosts, for the unit tests of the policies: a priority set, the
// cluster's config and stats on a heap store, and a runtime with the given overrides.

import { DEFAULT_OVERPROVISIONING_FACTOR, type ClusterConfig, type Locality } from '../../src/config/model';
import type { Logger } from '../../src/log/logger_api';
import { LiveRuntime } from '../../src/runtime/live_runtime';
import { createHeapStatsStore } from '../../src/stats/store';
import { ClusterInfo } from '../../src/upstream/worker/cluster_info';
import { edsHealthFlag } from '../../src/upstream/shared/health_flags';
import { Host } from '../../src/upstream/worker/host';
import type { LoadBalancer } from '../../src/upstream/worker/lb/load_balancer';
import type { LoadBalancerParams } from '../../src/upstream/worker/lb/load_balancer_base';
import { LOAD_BALANCERS } from '../../src/upstream/worker/lb/load_balancer_registry';
import { PrioritySet } from '../../src/upstream/worker/priority_set';
import type { EndpointHealthStatus } from '../../src/config/model';
import { silentLogger, staticCluster } from './data_plane';
import type { RandomSource } from '../../src/common/random';
import { SecretStore } from '../../src/tls/secret_store';

export const NO_LOCALITY: Locality = { region: '', zone: '', subZone: '' };

export interface HostSpec {
  readonly address?: string;
  readonly weight?: number;
  readonly priority?: number;
  readonly health?: EndpointHealthStatus;
  readonly healthFlags?: number;
  readonly locality?: Locality;
  /** The load_balancing_weight of the host's locality (locality-weighted balancing). */
  readonly localityWeight?: number;
  readonly metadata?: Readonly<Record<string, unknown>>;
}

export function host(port: number, spec: HostSpec = {}): Host {
  return new Host(spec.address ?? '10.0.0.1', port, {
    hostname: '',
    weight: spec.weight ?? 1,
    priority: spec.priority ?? 0,
    locality: spec.locality ?? NO_LOCALITY,
    localityWeight: spec.localityWeight,
    healthFlags: spec.healthFlags ?? edsHealthFlag(spec.health ?? 'HEALTHY'),
    metadata: spec.metadata ?? {},
  });
}

/** A random source that replays `values`, then repeats the last one. */
export function sequence(...values: number[]): RandomSource {
  let i = 0;
  return () => values[Math.min(i++, values.length - 1)];
}

/** A seeded uniform 32-bit generator (mulberry32), for distribution tests that must not flake. */
export function seeded(seed: number): RandomSource {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

export interface TestBalancer<L extends LoadBalancer = LoadBalancer> {
  readonly lb: L;
  readonly set: PrioritySet;
  readonly info: ClusterInfo;
  /** Re-reads the hosts' flags and membership, as the cluster does after an update. */
  update(hosts?: readonly Host[]): void;
}

export interface BalancerOptions {
  readonly random?: RandomSource;
  readonly config?: Partial<ClusterConfig>;
  /** Runtime overrides, key to value. */
  readonly runtime?: Readonly<Record<string, string>>;
  readonly localPrioritySet?: PrioritySet | null;
  /** The node's locality, listed first among the cluster's localities. */
  readonly localLocality?: Locality | null;
  /** Each host's requests in flight, as the cluster's rq_active gauges would say (0 when absent). */
  readonly activeRequests?: ReadonlyMap<Host, number>;
  readonly log?: Logger;
}

/** The parameters a cluster would give its balancer, over `hosts`. */
export function balancerParams(hosts: readonly Host[], options: BalancerOptions = {}): LoadBalancerParams {
  const config = staticCluster('c', [], options.config);
  const set = new PrioritySet(options.localLocality ?? null);
  set.update(hosts, DEFAULT_OVERPROVISIONING_FACTOR);
  return {
    prioritySet: set,
    localPrioritySet: options.localPrioritySet ?? null,
    info: new ClusterInfo(config, createHeapStatsStore(), new LiveRuntime([]), silentLogger, new SecretStore([])),
    commonLbConfig: config.commonLbConfig,
    runtime: new LiveRuntime(Object.entries(options.runtime ?? {})),
    random: options.random ?? sequence(0),
    activeRequests: (h) => options.activeRequests?.get(h) ?? 0,
    log: options.log ?? silentLogger,
  };
}

/** The registry's balancer for the config's lb_policy (ROUND_ROBIN unless overridden), over `hosts`. */
export function balancer(hosts: readonly Host[], options: BalancerOptions = {}): TestBalancer {
  const params = balancerParams(hosts, options);
  const policy = options.config?.lbPolicy ?? 'ROUND_ROBIN';
  const factory = LOAD_BALANCERS.get(policy);
  if (factory === undefined) throw new Error(`no balancer for ${policy}`);
  const lb = factory.create(params);
  let current = hosts;
  return {
    lb,
    set: params.prioritySet,
    info: params.info,
    update(next = current) {
      current = next;
      params.prioritySet.update(next, DEFAULT_OVERPROVISIONING_FACTOR);
      lb.refresh();
    },
  };
}

/** The ports of `n` picks without a context (null where there was no host). */
export function ports(lb: LoadBalancer, n: number): (number | null)[] {
  return Array.from({ length: n }, () => lb.chooseHost(null)?.port ?? null);
}
