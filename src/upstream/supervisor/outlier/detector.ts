// Outlier detection of one cluster, in the supervisor (Envoy's Outlier::DetectorImpl): the
// workers count each host's requests into shared memory (SharedHostMonitor); at each interval
// the detector takes those counts, returns ejected hosts whose time is up, and ejects by success
// rate and failure percentage; a worker's message ejects at once for a consecutive run. An
// ejection is the FAILED_OUTLIER_CHECK health flag, set through a membership update.

import type { OutlierDetection } from '../../../config/model';
import type { TimeoutHandle } from '../../../common/clock';
import type { Logger } from '../../../log/logger_api';
import { HostRecordField } from '../../../shared_memory/region_layout';
import type { Counter, Gauge, HostSlot } from '../../../stats/stats';
import { HealthFlag } from '../../shared/health_flags';
import { type ClusterSnapshot, hostKey, type MemberHost } from '../../shared/membership';
import type { HealthSource, HealthSourceContext, HealthSourceFactory } from '../supervisor_cluster_manager';
import { type ConsecutiveFailure, outlierRuntimeKey } from '../../shared/outlier/consecutive_failure';
import { type RandomSource, mathRandom } from '../../../common/random';

/** Where a request's failure came from: the upstream's answer, or the connection to it. */
export type Origin = 'external' | 'local_origin';

/** Envoy's OutlierEjectionType, in the words of its stats. */
export type EjectionType =
  | ConsecutiveFailure
  | 'success_rate'
  | 'local_origin_success_rate'
  | 'failure_percentage'
  | 'local_origin_failure_percentage';

const EJECTION_TYPES: readonly EjectionType[] = [
  'consecutive_5xx',
  'consecutive_gateway_failure',
  'success_rate',
  'failure_percentage',
  'consecutive_local_origin_failure',
  'local_origin_success_rate',
  'local_origin_failure_percentage',
];

/** The config field (and runtime key) of each type's enforcing percentage. */
const ENFORCING: Readonly<Record<EjectionType, keyof OutlierDetection & `enforcing${string}`>> = {
  consecutive_5xx: 'enforcingConsecutive5xx',
  consecutive_gateway_failure: 'enforcingConsecutiveGatewayFailure',
  consecutive_local_origin_failure: 'enforcingConsecutiveLocalOriginFailure',
  success_rate: 'enforcingSuccessRate',
  local_origin_success_rate: 'enforcingLocalOriginSuccessRate',
  failure_percentage: 'enforcingFailurePercentage',
  local_origin_failure_percentage: 'enforcingFailurePercentageLocalOrigin',
};
const ENFORCING_RUNTIME_KEYS: Readonly<Record<EjectionType, string>> = {
  consecutive_5xx: outlierRuntimeKey('enforcing_consecutive_5xx'),
  consecutive_gateway_failure: outlierRuntimeKey('enforcing_consecutive_gateway_failure'),
  consecutive_local_origin_failure: outlierRuntimeKey('enforcing_consecutive_local_origin_failure'),
  success_rate: outlierRuntimeKey('enforcing_success_rate'),
  local_origin_success_rate: outlierRuntimeKey('enforcing_local_origin_success_rate'),
  failure_percentage: outlierRuntimeKey('enforcing_failure_percentage'),
  local_origin_failure_percentage: outlierRuntimeKey('enforcing_failure_percentage_local_origin'),
};

const CONSECUTIVE_FIELDS: Readonly<Record<ConsecutiveFailure, HostRecordField>> = {
  consecutive_5xx: HostRecordField.Consecutive5xx,
  consecutive_gateway_failure: HostRecordField.ConsecutiveGatewayFailure,
  consecutive_local_origin_failure: HostRecordField.ConsecutiveLocalOriginFailure,
};

const ORIGINS: readonly Origin[] = ['external', 'local_origin'];
const INTERVAL_COUNTS: Readonly<Record<Origin, { readonly success: HostRecordField; readonly total: HostRecordField }>> = {
  external: { success: HostRecordField.ExternalSuccess, total: HostRecordField.ExternalTotal },
  local_origin: { success: HostRecordField.LocalOriginSuccess, total: HostRecordField.LocalOriginTotal },
};
const SUCCESS_RATE_TYPE: Readonly<Record<Origin, EjectionType>> = { external: 'success_rate', local_origin: 'local_origin_success_rate' };
const FAILURE_PERCENTAGE_TYPE: Readonly<Record<Origin, EjectionType>> = {
  external: 'failure_percentage',
  local_origin: 'local_origin_failure_percentage',
};

/** The success rate of one origin over the last interval, or -1 when it had too few requests. */
interface OriginState {
  /** The last interval's requests, taken from shared memory at its end. */
  success: number;
  total: number;
  /** Shown by GET /clusters. */
  successRate: number;
}

interface HostState {
  readonly key: string;
  readonly slot: HostSlot;
  ejected: boolean;
  numEjections: number;
  lastEjectionMs: number;
  readonly origins: Record<Origin, OriginState>;
}

/** The cluster's success rate figures of one origin (GET /clusters), -1 while not computed. */
export interface SuccessRateSummary {
  readonly average: number;
  readonly ejectionThreshold: number;
}

interface DetectionStats {
  readonly counters: Readonly<Record<string, Counter>>;
  readonly ejectionsActive: Gauge;
}

/** Envoy 1.16's ALL_OUTLIER_DETECTION_STATS, declared up front so that /stats lists them at 0. */
function detectionStats(context: HealthSourceContext): DetectionStats {
  const scope = context.stats.scope('outlier_detection');
  const names = [
    'ejections_consecutive_5xx',
    'ejections_enforced_total',
    'ejections_overflow',
    'ejections_success_rate',
    'ejections_total',
    ...EJECTION_TYPES.flatMap((type) => [`ejections_detected_${type}`, `ejections_enforced_${type}`]),
  ];
  return {
    counters: Object.fromEntries(names.map((name) => [name, scope.counter(name)])),
    ejectionsActive: scope.gauge('ejections_active'),
  };
}

export class OutlierDetector implements HealthSource {
  readonly newHostFlags = 0;
  /** Nothing to wait for: no host starts ejected. */
  readonly initialized = Promise.resolve();
  private readonly hosts = new Map<string, HostState>();
  private readonly stats: DetectionStats;
  private readonly log: Logger;
  private readonly summaries: Record<Origin, SuccessRateSummary> = {
    external: { average: -1, ejectionThreshold: -1 },
    local_origin: { average: -1, ejectionThreshold: -1 },
  };
  private active = 0;
  private timer: TimeoutHandle | null = null;

  constructor(
    private readonly context: HealthSourceContext,
    private readonly config: OutlierDetection,
    private readonly random: RandomSource,
  ) {
    this.stats = detectionStats(context);
    this.log = context.log.forFile(__filename);
    this.syncHosts(context.snapshot());
    this.armIntervalTimer();
  }

  onMembership(snapshot: ClusterSnapshot): void {
    this.syncHosts(snapshot);
  }

  close(): void {
    if (this.timer !== null) this.context.clock.clearTimeout(this.timer);
    this.timer = null;
    this.stats.ejectionsActive.sub(this.active);
    this.active = 0;
  }

  /** A host's success rate of `origin` over the last interval (-1: too few requests, or no such host). */
  successRate(key: string, origin: Origin): number {
    return this.hosts.get(key)?.origins[origin].successRate ?? -1;
  }

  /** The cluster's average success rate of `origin` and the threshold below which a host is ejected. */
  successRateSummary(origin: Origin): SuccessRateSummary {
    return this.summaries[origin];
  }

  /**
   * A worker saw `failure` reach its threshold on the host in `slot`: eject it now (Envoy's
   * onConsecutiveErrorWorker). The host may have left or been ejected since.
   */
  onConsecutiveFailure(slot: HostSlot, failure: ConsecutiveFailure): void {
    const host = this.hostInSlot(slot);
    if (host === null || host.ejected) return;
    this.count(`ejections_detected_${failure}`);
    this.ejectHost(host, failure);
    if (failure === 'consecutive_5xx') this.count('ejections_consecutive_5xx');
    // The run starts over, so that a host that stays gets a whole new run before the next ejection.
    this.resetConsecutive(host, failure);
  }

  private hostInSlot(slot: HostSlot): HostState | null {
    for (const host of this.hosts.values()) {
      if (host.slot.slot === slot.slot && host.slot.generation === slot.generation) return host;
    }
    return null;
  }

  private syncHosts(snapshot: ClusterSnapshot): void {
    const present = new Set<string>();
    for (const member of snapshot.hosts) {
      const key = hostKey(member);
      present.add(key);
      if (!this.hosts.has(key)) this.hosts.set(key, newHostState(key, member));
    }
    for (const [key, host] of this.hosts) {
      if (present.has(key)) continue;
      if (host.ejected) this.setActive(this.active - 1);
      this.hosts.delete(key);
    }
  }

  private armIntervalTimer(): void {
    const intervalMs = this.runtime().getInteger(outlierRuntimeKey('interval_ms'), this.config.intervalMs);
    this.timer = this.context.clock.setTimeout(() => this.onIntervalTimer(), intervalMs);
  }

  private onIntervalTimer(): void {
    const now = this.context.clock.now();
    for (const host of this.hosts.values()) {
      this.checkHostForUneject(host, now);
      this.takeIntervalCounts(host);
    }
    for (const origin of ORIGINS) this.processSuccessRateEjections(origin);
    this.armIntervalTimer();
  }

  private checkHostForUneject(host: HostState, now: number): void {
    if (!host.ejected) return;
    const baseEjectionTimeMs = this.runtime().getInteger(outlierRuntimeKey('base_ejection_time_ms'), this.config.baseEjectionTimeMs);
    // Each ejection of the same host lasts one base time longer than the one before.
    if (baseEjectionTimeMs * host.numEjections > now - host.lastEjectionMs) return;
    host.ejected = false;
    this.setActive(this.active - 1);
    // Runs that were close to their thresholds would eject again at the first few errors.
    for (const failure of Object.keys(CONSECUTIVE_FIELDS) as ConsecutiveFailure[]) this.resetConsecutive(host, failure);
    this.context.setHealthFlags(host.key, HealthFlag.FAILED_OUTLIER_CHECK, false);
    this.log.debug(`outlier detection: host ${host.key} of cluster '${this.context.config.name}' unejected`);
  }

  /** The interval's counts become the host's last interval; the workers count the next from 0. */
  private takeIntervalCounts(host: HostState): void {
    const { words, index } = this.context.hosts.record(host.slot.slot);
    for (const origin of ORIGINS) {
      const fields = INTERVAL_COUNTS[origin];
      const state = host.origins[origin];
      // A worker counts the total before the success, so a request may straddle two intervals:
      // never more successes than requests.
      state.total = Atomics.exchange(words, index + fields.total, 0);
      state.success = Math.min(state.total, Atomics.exchange(words, index + fields.success, 0));
      state.successRate = -1;
    }
  }

  private processSuccessRateEjections(origin: Origin): void {
    const runtime = this.runtime();
    const config = this.config;
    const successRateMinimumHosts = runtime.getInteger(outlierRuntimeKey('success_rate_minimum_hosts'), config.successRateMinimumHosts);
    const successRateRequestVolume = runtime.getInteger(outlierRuntimeKey('success_rate_request_volume'), config.successRateRequestVolume);
    const failurePercentageMinimumHosts = runtime.getInteger(
      outlierRuntimeKey('failure_percentage_minimum_hosts'),
      config.failurePercentageMinimumHosts,
    );
    const failurePercentageRequestVolume = runtime.getInteger(
      outlierRuntimeKey('failure_percentage_request_volume'),
      config.failurePercentageRequestVolume,
    );
    this.summaries[origin] = { average: -1, ejectionThreshold: -1 };
    if (this.hosts.size < successRateMinimumHosts && this.hosts.size < failurePercentageMinimumHosts) return;

    const successRateHosts: [HostState, number][] = [];
    const failurePercentageHosts: [HostState, number][] = [];
    let successRateSum = 0;
    for (const host of this.hosts.values()) {
      if (host.ejected) continue;
      const state = host.origins[origin];
      if (state.total === 0) continue;
      const successRate = (state.success * 100) / state.total;
      if (state.total >= Math.min(successRateRequestVolume, failurePercentageRequestVolume)) state.successRate = successRate;
      if (state.total >= successRateRequestVolume) {
        successRateHosts.push([host, successRate]);
        successRateSum += successRate;
      }
      if (state.total >= failurePercentageRequestVolume) failurePercentageHosts.push([host, successRate]);
    }

    if (successRateHosts.length > 0 && successRateHosts.length >= successRateMinimumHosts) {
      const stdevFactor = runtime.getInteger(outlierRuntimeKey('success_rate_stdev_factor'), config.successRateStdevFactor) / 1000;
      const summary = successRateEjectionThreshold(successRateSum, successRateHosts, stdevFactor);
      this.summaries[origin] = summary;
      for (const [host, successRate] of successRateHosts) {
        if (successRate >= summary.ejectionThreshold) continue;
        this.count('ejections_success_rate');
        this.count(`ejections_detected_${SUCCESS_RATE_TYPE[origin]}`);
        this.ejectHost(host, SUCCESS_RATE_TYPE[origin]);
      }
    }

    if (failurePercentageHosts.length > 0 && failurePercentageHosts.length >= failurePercentageMinimumHosts) {
      const threshold = runtime.getInteger(outlierRuntimeKey('failure_percentage_threshold'), config.failurePercentageThreshold);
      for (const [host, successRate] of failurePercentageHosts) {
        if (100 - successRate < threshold) continue;
        this.count(`ejections_detected_${FAILURE_PERCENTAGE_TYPE[origin]}`);
        // Already ejected for its success rate this interval: one ejection, not two.
        if (!host.ejected) this.ejectHost(host, FAILURE_PERCENTAGE_TYPE[origin]);
      }
    }
  }

  private ejectHost(host: HostState, type: EjectionType): void {
    const maxEjectionPercent = Math.min(100, this.runtime().getInteger(outlierRuntimeKey('max_ejection_percent'), this.config.maxEjectionPercent));
    // Counted over every priority together, as Envoy does.
    const ejectedPercent = (100 * this.active) / this.hosts.size;
    if (ejectedPercent >= maxEjectionPercent) {
      this.count('ejections_overflow');
      return;
    }
    // Envoy's deprecated total counts only these two types.
    if (type === 'consecutive_5xx' || type === 'success_rate') this.count('ejections_total');
    if (!this.enforced(type)) return;
    if (!this.context.setHealthFlags(host.key, HealthFlag.FAILED_OUTLIER_CHECK, true)) return;
    host.ejected = true;
    host.numEjections++;
    host.lastEjectionMs = this.context.clock.now();
    this.setActive(this.active + 1);
    this.count('ejections_enforced_total');
    this.count(`ejections_enforced_${type}`);
    this.log.debug(`outlier detection: host ${host.key} of cluster '${this.context.config.name}' ejected (${type})`);
  }

  /** The type's enforcing percentage decides whether a detected outlier is ejected. */
  private enforced(type: EjectionType): boolean {
    return this.random() % 100 < this.runtime().getInteger(ENFORCING_RUNTIME_KEYS[type], this.config[ENFORCING[type]]);
  }

  private resetConsecutive(host: HostState, failure: ConsecutiveFailure): void {
    const { words, index } = this.context.hosts.record(host.slot.slot);
    Atomics.store(words, index + CONSECUTIVE_FIELDS[failure], 0);
  }

  private setActive(active: number): void {
    this.active = active;
    this.stats.ejectionsActive.set(active);
  }

  private count(name: string): void {
    this.stats.counters[name]!.inc();
  }

  private runtime() {
    return this.context.runtime.snapshot();
  }
}

function newHostState(key: string, member: MemberHost): HostState {
  const origin = (): OriginState => ({ success: 0, total: 0, successRate: -1 });
  return { key, slot: member.slot, ejected: false, numEjections: 0, lastEjectionMs: 0, origins: { external: origin(), local_origin: origin() } };
}

/** Mean of the hosts' success rates, and the mean less `stdevFactor` population standard deviations. */
function successRateEjectionThreshold(sum: number, hosts: readonly [HostState, number][], stdevFactor: number): SuccessRateSummary {
  const mean = sum / hosts.length;
  let variance = 0;
  for (const [, rate] of hosts) variance += (rate - mean) ** 2;
  variance /= hosts.length;
  return { average: mean, ejectionThreshold: mean - stdevFactor * Math.sqrt(variance) };
}

/** Makes a detector for each cluster with outlier_detection. `random` decides the enforcing percentages. */
export function outlierDetectionFactory(random: RandomSource = mathRandom): HealthSourceFactory {
  return {
    create: (context) => (context.config.outlierDetection === null ? null : new OutlierDetector(context, context.config.outlierDetection, random)),
  };
}

/** The outlier detector among a cluster's health sources, if it has one. */
export function outlierDetectorOf(sources: readonly HealthSource[]): OutlierDetector | null {
  return sources.find((source): source is OutlierDetector => source instanceof OutlierDetector) ?? null;
}
