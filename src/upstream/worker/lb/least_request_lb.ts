// Envoy's LEAST_REQUEST load balancer (LeastRequestLoadBalancer over EdfLoadBalancerBase).
// Among equally weighted hosts, the power of `choice_count` choices: that many uniform samples,
// with replacement, and the one with the fewest requests in flight (a later sample wins only
// with strictly fewer). Among unequally weighted hosts, the EDF schedule, each host weighing
// `weight / (active + 1)^active_request_bias` when it is (re)scheduled, so a busy host's turn
// comes later without it ever draining completely.

import type { RuntimeDouble } from '../../../config/model';
import type { Logger } from '../../../log/logger_api';
import type { Host } from '../host';
import { EdfLoadBalancerBase } from './edf_load_balancer';
import type { LoadBalancerParams } from './load_balancer_base';

/** Envoy's default, and what an invalid bias is replaced by. */
const DEFAULT_ACTIVE_REQUEST_BIAS = 1.0;

export class LeastRequestLoadBalancer extends EdfLoadBalancerBase {
  private readonly choiceCount: number;
  private readonly biasConfig: RuntimeDouble | null;
  private readonly activeRequests: (host: Host) => number;
  private readonly log: Logger;
  /** Read from the runtime at each refresh, not at each pick (as Envoy caches it). */
  private activeRequestBias = DEFAULT_ACTIVE_REQUEST_BIAS;

  constructor(params: LoadBalancerParams) {
    super(params);
    const config = params.info.leastRequestLbConfig;
    this.choiceCount = config.choiceCount;
    this.biasConfig = config.activeRequestBias;
    this.activeRequests = params.activeRequests;
    this.log = params.log.forFile(__filename);
  }

  override refresh(): void {
    // Before the base rebuilds the schedules: they are built with hostWeight.
    this.activeRequestBias = this.readActiveRequestBias();
    super.refresh();
  }

  protected hostWeight(host: Host): number {
    const bias = this.activeRequestBias;
    if (bias === 0) return host.weight;
    const active = this.activeRequests(host);
    return bias === 1 ? host.weight / (active + 1) : host.weight / Math.pow(active + 1, bias);
  }

  protected unweightedHostPick(hosts: readonly Host[]): Host {
    let candidate = hosts[this.random() % hosts.length];
    let candidateActive = this.activeRequests(candidate);
    for (let choice = 1; choice < this.choiceCount; choice++) {
      const sampled = hosts[this.random() % hosts.length];
      const sampledActive = this.activeRequests(sampled);
      if (sampledActive < candidateActive) {
        candidate = sampled;
        candidateActive = sampledActive;
      }
    }
    return candidate;
  }

  private readActiveRequestBias(): number {
    const config = this.biasConfig;
    if (config === null) return DEFAULT_ACTIVE_REQUEST_BIAS;
    const bias = this.runtime.snapshot().getDouble(config.runtimeKey, config.defaultValue);
    // Envoy warns about a negative bias only; NaN or infinite weights would stall the schedule.
    if (bias >= 0 && Number.isFinite(bias)) return bias;
    this.log.warn(`upstream: invalid active request bias supplied (runtime key ${config.runtimeKey}), using 1.0`);
    return DEFAULT_ACTIVE_REQUEST_BIAS;
  }
}
