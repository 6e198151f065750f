// A cluster's active health checker (Envoy's HealthCheckerImplBase), run by the supervisor: one
// session per host, verdicts published as the host's FAILED_ACTIVE_HC / DEGRADED_ACTIVE_HC /
// PENDING_ACTIVE_HC bits through a membership update, so every worker's balancers follow.
// Joining hosts start failed (and pending, with ignore_new_hosts_until_first_hc); the cluster
// is initialized once every first host has had its first check.

import type { HealthCheck, SocketAddress } from '../../../config/model';
import type { Logger } from '../../../log/logger_api';
import { HealthFlag, healthFlagsString } from '../../shared/health_flags';
import type { ClusterSnapshot, DiscoveredHost, MembershipUpdate } from '../../shared/membership';
import type { Connector } from '../../../network/connector';
import { hostKey } from '../../shared/membership';
import type { HealthSource, HealthSourceContext } from '../supervisor_cluster_manager';
import { type IntervalInputs, initialCheckDelay, nextCheckDelay } from './check_interval';
import type { HealthEventLog, HealthCheckerType } from './health_event_log';
import { healthEventLine } from './health_event_log';
import type { HealthCheckStats } from './health_check_stats';
import { HealthCheckSession, type SessionOwner } from './health_check_session';
import type { ProbeFactory, ProbeTarget } from './health_probe';
import { type CheckOutcome, judge } from './verdict';
import type { RandomSource } from '../../../common/random';

/** The bits this checker owns. */
const ACTIVE_HC_FLAGS = HealthFlag.FAILED_ACTIVE_HC | HealthFlag.DEGRADED_ACTIVE_HC | HealthFlag.PENDING_ACTIVE_HC;

export interface ActiveHealthCheckerDeps {
  readonly type: HealthCheckerType;
  readonly stats: HealthCheckStats;
  readonly probes: ProbeFactory;
  /** The transport socket a host is checked through (the cluster's choice for it, or the check's criteria). */
  readonly connectorFor: (host: DiscoveredHost) => Connector;
  readonly random: RandomSource;
  /** null without event_log_path. */
  readonly eventLog: HealthEventLog | null;
  /** Wall-clock milliseconds, for the event log's timestamps. */
  readonly wallClock: () => number;
}

export class ActiveHealthChecker implements HealthSource, SessionOwner {
  readonly newHostFlags: number;
  readonly initialized: Promise<void>;
  private resolveInitialized!: () => void;
  /** Hosts of the first membership still waiting for their first check; null before it. */
  private initialHosts: Set<string> | null = null;
  private readonly sessions = new Map<string, HealthCheckSession>();
  private hadTraffic = false;
  private healthy = 0;
  private degraded = 0;
  private readonly log: Logger;

  constructor(
    private readonly context: HealthSourceContext,
    private readonly config: HealthCheck,
    private readonly deps: ActiveHealthCheckerDeps,
  ) {
    this.log = context.healthCheckLog.forFile(__filename);
    this.newHostFlags = HealthFlag.FAILED_ACTIVE_HC | (context.config.commonLbConfig.ignoreNewHostsUntilFirstHc ? HealthFlag.PENDING_ACTIVE_HC : 0);
    this.initialized = new Promise((resolve) => (this.resolveInitialized = resolve));
  }

  onMembership(_snapshot: ClusterSnapshot, update: MembershipUpdate): void {
    if (this.initialHosts === null) this.initialHosts = new Set(update.added);
    for (const key of update.removed) this.removeSession(key);
    if (update.added.length > 0 || update.changed.length > 0) {
      const hosts = new Map(update.hosts.map((h) => [hostKey(h), h]));
      for (const key of update.added) {
        const host = hosts.get(key);
        if (host !== undefined) this.addSession(key, this.targetOf(host), host.healthFlags & ACTIVE_HC_FLAGS);
      }
      for (const key of update.changed) {
        const host = hosts.get(key);
        const session = this.sessions.get(key);
        if (host === undefined || session === undefined) continue;
        const target = this.targetOf(host);
        if (sameAddress(target.address, session.address) && target.connector === session.target.connector) continue;
        session.retarget(target, this.deps.probes(target));
      }
    }
    this.checkInitialized();
  }

  close(): void {
    for (const session of this.sessions.values()) session.close();
    this.sessions.clear();
    this.deps.eventLog?.close();
  }

  initialDelay(): number {
    return initialCheckDelay(this.config, this.intervalInputs(), this.deps.random);
  }

  onAttempt(): void {
    this.deps.stats.attempt.inc();
  }

  onOutcome(session: HealthCheckSession, outcome: CheckOutcome): number {
    const { stats } = this.deps;
    const verdict = judge(session.flags, session.counts, outcome, this.config);
    if (outcome.kind === 'success') {
      stats.success.inc();
    } else {
      stats.failure.inc();
      if (outcome.type === 'NETWORK') stats.networkFailure.inc();
      else if (outcome.type === 'PASSIVE') stats.passiveFailure.inc();
    }
    const log = this.log;
    if (log.enabled('debug')) {
      const result = outcome.kind === 'success' ? 'success' : `failure (${outcome.type})`;
      const { address, port } = session.address;
      log.debug(`hc ${result} for ${address}:${port} in cluster '${this.context.config.name}': health_flags=${healthFlagsString(verdict.flags)}`);
    }
    const before = session.flags;
    session.flags = verdict.flags;
    session.counts = verdict.counts;
    this.count(before, -1);
    this.count(verdict.flags, 1);
    // Bits set before bits cleared: between the two updates the host looks worse, never better.
    const set = verdict.flags & ~before;
    const cleared = before & ~verdict.flags;
    if (set !== 0) this.context.setHealthFlags(session.key, set, true);
    if (cleared !== 0) this.context.setHealthFlags(session.key, cleared, false);
    for (const event of verdict.events) {
      this.deps.eventLog?.write(healthEventLine(this.deps.type, session.address, this.context.config.name, event, this.deps.wallClock()));
    }
    if (this.initialHosts?.delete(session.key)) this.checkInitialized();
    return nextCheckDelay(this.config, outcome.kind === 'success', verdict.transition, this.intervalInputs(), this.deps.random);
  }

  private targetOf(host: DiscoveredHost): ProbeTarget {
    return { address: host.address, connector: this.deps.connectorFor(host) };
  }

  private addSession(key: string, target: ProbeTarget, flags: number): void {
    const session = new HealthCheckSession(key, target, flags, this.deps.probes(target), this.context.clock, this.config.timeoutMs, this);
    this.sessions.set(key, session);
    this.count(flags, 1);
    session.start();
  }

  private removeSession(key: string): void {
    const session = this.sessions.get(key);
    if (session === undefined) return;
    session.close();
    this.sessions.delete(key);
    this.count(session.flags, -1);
    this.initialHosts?.delete(key);
  }

  /** Adds a host with `flags` to (1) or takes it from (-1) the healthy and degraded gauges. */
  private count(flags: number, sign: 1 | -1): void {
    if ((flags & HealthFlag.FAILED_ACTIVE_HC) === 0) this.healthy += sign;
    if ((flags & HealthFlag.DEGRADED_ACTIVE_HC) !== 0) this.degraded += sign;
    this.deps.stats.healthy.set(this.healthy);
    this.deps.stats.degraded.set(this.degraded);
  }

  private checkInitialized(): void {
    if (this.initialHosts !== null && this.initialHosts.size === 0) this.resolveInitialized();
  }

  private intervalInputs(): IntervalInputs {
    // Envoy asks whether upstream_cx_total was ever used; once it was, it stays so.
    this.hadTraffic ||= this.context.stats.counter('upstream_cx_total').value() > 0;
    const runtime = this.context.runtime.snapshot();
    return {
      hadTraffic: this.hadTraffic,
      minIntervalMs: runtime.getInteger('health_check.min_interval', 0),
      maxIntervalMs: runtime.getInteger('health_check.max_interval', Number.MAX_SAFE_INTEGER),
    };
  }
}

function sameAddress(a: SocketAddress, b: SocketAddress): boolean {
  return a.address === b.address && a.port === b.port;
}
