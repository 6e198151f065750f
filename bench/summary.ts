// From measured rounds to what a row reports: medians across rounds (one slow round from a noisy
// neighbour does not move them), errors summed (one failed request in any round is shown), and
// the ratios to the nginx row of the same group.

import type { SocketErrors, WrkResult } from './wrk';

export interface Round {
  readonly wrk: WrkResult;
  /** CPU clock ticks the proxy under test used during the run; null for the direct row. */
  readonly cpuTicks: number | null;
}

export interface RowSummary {
  readonly requestsPerSecond: number;
  readonly p50Us: number;
  readonly p99Us: number;
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

/** Null when no request completed: CPU spent on nothing has no per-request cost. */
export function cpuUsPerRequest(cpuTicks: number, ticksPerSecond: number, requests: number): number | null {
  return requests === 0 ? null : (cpuTicks * 1e6) / ticksPerSecond / requests;
}

export function summarize(rounds: readonly Round[], ticksPerSecond: number): RowSummary {
  const cpu = rounds
    .map((round) => (round.cpuTicks === null ? null : cpuUsPerRequest(round.cpuTicks, ticksPerSecond, round.wrk.requests)))
    .filter((value): value is number => value !== null);
  const sum = (pick: (wrk: WrkResult) => number): number => rounds.reduce((total, round) => total + pick(round.wrk), 0);
  return {
    requestsPerSecond: median(rounds.map((round) => round.wrk.requestsPerSecond)),
    p50Us: median(rounds.map((round) => round.wrk.latency.p50Us)),
    p99Us: median(rounds.map((round) => round.wrk.latency.p99Us)),
    cpuUsPerRequest: cpu.length === 0 ? null : median(cpu),
    errorResponses: sum((wrk) => wrk.errorResponses),
    socketErrors: {
      connect: sum((wrk) => wrk.socketErrors.connect),
      read: sum((wrk) => wrk.socketErrors.read),
      write: sum((wrk) => wrk.socketErrors.write),
      timeout: sum((wrk) => wrk.socketErrors.timeout),
    },
  };
}

export function ratiosTo(row: RowSummary, nginx: RowSummary | null): Ratios {
  const ratio = (value: number | null, reference: number | null): number | null =>
    value === null || reference === null || reference === 0 ? null : value / reference;
  return {
    requestsPerSecond: ratio(row.requestsPerSecond, nginx?.requestsPerSecond ?? null),
    cpuPerRequest: ratio(row.cpuUsPerRequest, nginx?.cpuUsPerRequest ?? null),
  };
}
