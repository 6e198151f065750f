// Circuit breaking's admission control (Envoy's ResourceManager): per cluster and routing
// priority, how many connections, pending requests, requests, retries and connection pools may
// be open at once. The counts live in shared memory and are updated with Atomics, so the limits
// hold for all workers together; the limits are the configured thresholds unless runtime
// `circuit_breakers.<cluster>.<default|high>.<field>` overrides them, read at each check.

import type { CircuitBreakerThresholds, RoutingPriority } from '../../config/model';
import type { RuntimeSource } from '../../runtime/live_runtime';
import type { SharedCounts } from '../../stats/shared_counts';

/** One limited resource. */
export interface Resource {
  /** Whether one more may be opened now. */
  canCreate(): boolean;
  /**
   * Opens one if the limit allows, in one atomic step (canCreate then inc could let two
   * workers both take the last one).
   */
  tryAcquire(): boolean;
  /** Opens one whatever the limit (what is admitted elsewhere, like a connection for a pool). */
  inc(): void;
  /** Closes `n` (default 1). */
  release(n?: number): void;
  /** The limit now. */
  max(): number;
  /** How many are open, over every worker. */
  count(): number;
}

/** Count indexes in the shared block. */
const enum Slot {
  Connections = 0,
  PendingRequests = 1,
  Requests = 2,
  Retries = 3,
  ConnectionPools = 4,
}
export const RESOURCE_COUNT = 5;

class SharedResource implements Resource {
  constructor(
    private readonly counts: SharedCounts,
    private readonly slot: Slot,
    private readonly limit: () => number,
  ) {}

  canCreate(): boolean {
    return this.counts.get(this.slot) < this.limit();
  }

  tryAcquire(): boolean {
    return this.counts.tryIncrement(this.slot, this.limit());
  }

  inc(): void {
    this.counts.add(this.slot, 1);
  }

  release(n = 1): void {
    this.counts.add(this.slot, -n);
  }

  max(): number {
    return this.limit();
  }

  count(): number {
    return this.counts.get(this.slot);
  }
}

/** The resources of one cluster at one routing priority. */
export class ResourceManager {
  readonly connections: Resource;
  readonly pendingRequests: Resource;
  readonly requests: Resource;
  readonly retries: Resource;
  readonly connectionPools: Resource;

  /**
   * @param counts   the shared block of RESOURCE_COUNT counts of this cluster and priority
   * @param cluster  the cluster's name, as the runtime keys spell it
   */
  constructor(
    counts: SharedCounts,
    readonly thresholds: CircuitBreakerThresholds,
    runtime: RuntimeSource,
    cluster: string,
    readonly priority: RoutingPriority,
  ) {
    const prefix = `circuit_breakers.${cluster}.${priority === 'DEFAULT' ? 'default' : 'high'}.`;
    const keyed = (field: string, configured: number) => {
      const key = prefix + field;
      return () => runtime.snapshot().getInteger(key, configured);
    };
    this.connections = new SharedResource(counts, Slot.Connections, keyed('max_connections', thresholds.maxConnections));
    this.pendingRequests = new SharedResource(counts, Slot.PendingRequests, keyed('max_pending_requests', thresholds.maxPendingRequests));
    this.requests = new SharedResource(counts, Slot.Requests, keyed('max_requests', thresholds.maxRequests));
    this.connectionPools = new SharedResource(counts, Slot.ConnectionPools, keyed('max_connection_pools', thresholds.maxConnectionPools));
    const maxRetries = keyed('max_retries', thresholds.maxRetries);
    const budgetPercentKey = prefix + 'retry_budget.budget_percent';
    const minConcurrencyKey = prefix + 'retry_budget.min_retry_concurrency';
    const budget = thresholds.retryBudget;
    // Envoy's RetryBudgetImpl: a budget, configured or set in the runtime, replaces max_retries
    // with a share of the requests open and pending now, never below min_retry_concurrency.
    const retryLimit = (): number => {
      const snapshot = runtime.snapshot();
      const runtimePercent = snapshot.get(budgetPercentKey);
      const runtimeConcurrency = snapshot.get(minConcurrencyKey);
      if (budget === null && runtimePercent === undefined && runtimeConcurrency === undefined) return maxRetries();
      const percent = snapshot.getDouble(budgetPercentKey, budget?.budgetPercent ?? 20);
      const concurrency = snapshot.getInteger(minConcurrencyKey, budget?.minRetryConcurrency ?? 3);
      const active = this.requests.count() + this.pendingRequests.count();
      return Math.max(Math.floor((percent / 100) * active), concurrency);
    };
    this.retries = new SharedResource(counts, Slot.Retries, retryLimit);
  }
}
