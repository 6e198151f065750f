// How traffic is split across priorities and between healthy and degraded hosts, and which
// priorities are in panic (Envoy's LoadBalancerBase, load_balancer_impl.cc). Pure arithmetic
// over host counts, in integer percent like Envoy, so the results match it exactly.

/** common_lb_config.healthy_panic_threshold's default, in percent. */
export const DEFAULT_HEALTHY_PANIC_THRESHOLD = 50;

export interface HostCounts {
  readonly hosts: number;
  readonly healthy: number;
  readonly degraded: number;
  /**
   * Hosts left out of the health arithmetic (new ones awaiting their first health check,
   * with ignore_new_hosts_until_first_hc): they neither count toward spillover nor panic.
   */
  readonly excluded?: number;
  /** The priority's overprovisioning factor in percent (load_assignment.policy). */
  readonly overprovisioningFactor: number;
}

export interface PriorityLoad {
  /** Percent of traffic for the healthy hosts of each priority. */
  readonly healthy: readonly number[];
  /** Percent of traffic for the degraded hosts of each priority. */
  readonly degraded: readonly number[];
  /** A priority in panic balances over all its hosts, whatever their health. */
  readonly panic: readonly boolean[];
}

export type Availability = 'healthy' | 'degraded';

export function computePriorityLoad(counts: readonly HostCounts[], panicThreshold: number = DEFAULT_HEALTHY_PANIC_THRESHOLD): PriorityLoad {
  const health = counts.map((c) => availability(c.healthy, eligible(c), c.overprovisioningFactor));
  const degradedHealth = counts.map((c) => availability(c.degraded, eligible(c), c.overprovisioningFactor));
  const healthy = counts.map(() => 0);
  const degraded = counts.map(() => 0);
  const total = normalizedTotalAvailability(health, degradedHealth);

  if (total > 0) {
    const healthyShare = distribute(healthy, health, 100, total);
    const degradedShare = distribute(degraded, degradedHealth, healthyShare.remaining, total);
    // Rounding leftovers go to the first priority with healthy hosts, else with degraded ones.
    if (degradedShare.remaining !== 0) {
      if (healthyShare.first >= 0) healthy[healthyShare.first] += degradedShare.remaining;
      else degraded[degradedShare.first] += degradedShare.remaining;
    }
  }

  const threshold = Math.min(100, panicThreshold);
  if (threshold === 0 && total === 0) {
    // Panic disabled and nothing available: the load must still add up to 100 somewhere.
    healthy[0] = 100;
    return { healthy, degraded, panic: counts.map(() => false) };
  }
  const panic = counts.map((c) => total !== 100 && threshold !== 0 && inPanic(c, threshold));
  if (panic.every((p) => p)) return totalPanicLoad(counts, panic);
  return { healthy, degraded, panic };
}

/** Picks the priority and availability for `hash` (any non-negative integer) from the loads. */
export function choosePriority(load: PriorityLoad, hash: number): { priority: number; availability: Availability } {
  const point = (hash % 100) + 1;
  let aggregate = 0;
  for (let priority = 0; priority < load.healthy.length; priority++) {
    aggregate += load.healthy[priority];
    if (point <= aggregate) return { priority, availability: 'healthy' };
  }
  for (let priority = 0; priority < load.degraded.length; priority++) {
    aggregate += load.degraded[priority];
    if (point <= aggregate) return { priority, availability: 'degraded' };
  }
  // Loads always add up to 100; reaching here means they were built by hand, wrongly.
  throw new RangeError('priority loads do not add up to 100');
}

function availability(count: number, hosts: number, overprovisioningFactor: number): number {
  return hosts === 0 ? 0 : Math.min(100, Math.floor((overprovisioningFactor * count) / hosts));
}

function normalizedTotalAvailability(health: readonly number[], degraded: readonly number[]): number {
  const sum = health.reduce((a, b) => a + b, 0) + degraded.reduce((a, b) => a + b, 0);
  return Math.min(100, sum);
}

/** Gives each priority, in order, up to its share of `total`; reports what is left. */
function distribute(
  load: number[],
  availabilities: readonly number[],
  total: number,
  normalizedTotal: number,
): { first: number; remaining: number } {
  let first = -1;
  let remaining = total;
  for (let i = 0; i < availabilities.length; i++) {
    if (first < 0 && availabilities[i] > 0) first = i;
    load[i] = Math.min(remaining, Math.floor((availabilities[i] * 100) / normalizedTotal));
    remaining -= load[i];
  }
  return { first, remaining };
}

function eligible(c: HostCounts): number {
  return c.hosts - (c.excluded ?? 0);
}

/** Envoy's isHostSetInPanic: fewer healthy and degraded hosts than `threshold` percent of the eligible ones. */
export function inPanic(c: HostCounts, threshold: number): boolean {
  const hosts = eligible(c);
  const healthyPercent = hosts === 0 ? 0 : (100 * c.healthy) / hosts;
  const degradedPercent = hosts === 0 ? 0 : (100 * c.degraded) / hosts;
  return healthyPercent + degradedPercent < threshold;
}

/** Every priority in panic: load follows the host counts, health ignored. */
function totalPanicLoad(counts: readonly HostCounts[], panic: readonly boolean[]): PriorityLoad {
  const totalHosts = counts.reduce((sum, c) => sum + c.hosts, 0);
  const healthy = counts.map(() => 0);
  const degraded = counts.map(() => 0);
  if (totalHosts === 0) {
    healthy[0] = 100;
    return { healthy, degraded, panic };
  }
  let remaining = 100;
  let firstNonEmpty = -1;
  for (let i = 0; i < counts.length; i++) {
    if (firstNonEmpty < 0 && counts[i].hosts !== 0) firstNonEmpty = i;
    healthy[i] = Math.floor((100 * counts[i].hosts) / totalHosts);
    remaining -= healthy[i];
  }
  healthy[firstNonEmpty] += remaining;
  return { healthy, degraded, panic };
}
