// From measured rounds to what a row reports: medians across rounds (one slow round from a noisy
// neighbour does not move them), errors summed (one failed request in any round is shown), and
// the ratios to the nginx row of the same group.

import type { LatencyPercentiles, LoadResult, SocketErrors } from './load_result';

export interface Round {
  readonly load: LoadResult;
  /** CPU clock ticks the proxy under test used during the run; null for the direct row. */
  readonly cpuTicks: number | null;
}

export interface RowSummary {
  readonly requestsPerSecond: number;
  /** Null when the load generator reports no percentiles. */
  readonly p50Us: number | null;
  readonly p99Us: number | null;
  readonly cpuUsPerRequest: number | null;
  readonly errorResponses: number;
  readonly socketErrors: SocketErrors;
}

/** Each is this row's value divided by nginx's; null when either side is missing. */
export interface Ratios {
  readonly requestsPerSecond: number | null;
  readonly cpuPerRequest: number | null;
}

export class SummaryError extends Error {
  override readonly name = 'SummaryError';
}

export function median(values: readonly number[]): number {
  if (values.length === 0) throw new SummaryError('median of no values');
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** The nearest-rank `p`th percentile (0 < p <= 100): the smallest value at least p% of them do not exceed. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) throw new SummaryError(`percentile ${p} of no values`);
  if (!(p > 0 && p <= 100)) throw new SummaryError(`percentile ${p} is not in (0, 100]`);
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil((p / 100) * sorted.length) - 1] as number;
}

/** Null when no request completed: CPU spent on nothing has no per-request cost. */
export function cpuUsPerRequest(cpuTicks: number, ticksPerSecond: number, requests: number): number | null {
  return requests === 0 ? null : (cpuTicks * 1e6) / ticksPerSecond / requests;
}

/** Null for the direct row, which has no proxy, and for a round that completed no request. */
export function roundCpuUsPerRequest(round: Round, ticksPerSecond: number): number | null {
  return round.cpuTicks === null ? null : cpuUsPerRequest(round.cpuTicks, ticksPerSecond, round.load.requests);
}

export function summarize(rounds: readonly Round[], ticksPerSecond: number): RowSummary {
  const cpu = rounds.map((round) => roundCpuUsPerRequest(round, ticksPerSecond)).filter((value): value is number => value !== null);
  const sum = (pick: (load: LoadResult) => number): number => rounds.reduce((total, round) => total + pick(round.load), 0);
  return {
    requestsPerSecond: median(rounds.map((round) => round.load.requestsPerSecond)),
    p50Us: latencyMedian(rounds, (latency) => latency.p50Us),
    p99Us: latencyMedian(rounds, (latency) => latency.p99Us),
    cpuUsPerRequest: cpu.length === 0 ? null : median(cpu),
    errorResponses: sum((load) => load.errorResponses),
    socketErrors: {
      connect: sum((load) => load.socketErrors.connect),
      read: sum((load) => load.socketErrors.read),
      write: sum((load) => load.socketErrors.write),
      timeout: sum((load) => load.socketErrors.timeout),
    },
  };
}

function latencyMedian(rounds: readonly Round[], pick: (latency: LatencyPercentiles) => number): number | null {
  const values = rounds.flatMap((round) => (round.load.latency === null ? [] : [pick(round.load.latency)]));
  return values.length === 0 ? null : median(values);
}

export function ratiosTo(row: RowSummary, nginx: RowSummary | null): Ratios {
  const ratio = (value: number | null, reference: number | null): number | null =>
    value === null || reference === null || reference === 0 ? null : value / reference;
  return {
    requestsPerSecond: ratio(row.requestsPerSecond, nginx?.requestsPerSecond ?? null),
    cpuPerRequest: ratio(row.cpuUsPerRequest, nginx?.cpuUsPerRequest ?? null),
  };
}
