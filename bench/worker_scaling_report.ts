// What the worker-scaling benchmark reports: the throughput `--concurrency 2` can reach against
// one worker's, target at least 1.7x. Pure.
//
// A proxy's throughput is capped by its busiest process: when that process has a CPU of its own
// and uses all of it. A round's capacity is therefore its throughput over the busiest process's
// share of a CPU: with every worker on its own otherwise idle CPU and the load generator not the
// limit, the busiest worker runs at 100% and the capacity is the throughput measured; on a machine
// too small for that (the load generator and the upstream need CPUs too), it is the throughput the
// same cost per request and the same split of the load between the workers would give. A shared
// bottleneck (the supervisor), a cost that grows with the workers or a worker left with most of
// the connections lowers it. How the connections split is chance unless the listener balances
// them (bench/README.md), so the capacity the round's cost would give with the load split evenly
// is printed beside it. `--concurrency 2` runs three times: with the workers sharing the listen
// socket, with the listener's reuse_port (a socket per worker, the kernel hashing the
// connections over them), and sharing it with exact_balance (each connection passed to the
// worker holding fewer), which the target is judged on.

import { median } from './summary';
import { formatCount } from './table';

/** The least `--concurrency 2` may reach, in times one worker's capacity. */
export const SCALING_TARGET = 1.7;

export interface ScalingRound {
  /** Requests per second the load generator counted. */
  readonly requestsPerSecond: number;
  /** The share of one CPU the supervisor used over the round. */
  readonly supervisor: number;
  /** The same for each worker, in the order of their pids: their indexes', as the supervisor forks them in turn. */
  readonly workers: readonly number[];
  /** The connections each worker accepted in the round (its listener's `worker_<index>.downstream_cx_total`). */
  readonly connections: readonly number[];
}

/** How the listener spreads its connections over the workers. */
export type Spread = 'shared socket' | 'reuse_port' | 'exact_balance';

export interface ScalingRun {
  /** The proxy's `--concurrency`. */
  readonly concurrency: number;
  readonly spread: Spread;
  readonly rounds: readonly ScalingRound[];
}

export class ScalingReportError extends Error {
  override readonly name = 'ScalingReportError';
}

/** Requests per second when the busiest process of the proxy has one CPU to itself. */
export function capacity(round: ScalingRound): number {
  const busiest = Math.max(round.supervisor, ...round.workers);
  if (!(busiest > 0)) throw new ScalingReportError('no process of the proxy used any CPU in a round');
  return round.requestsPerSecond / busiest;
}

/** The same with the workers' CPU split evenly between them. */
export function evenCapacity(round: ScalingRound): number {
  const mean = round.workers.reduce((sum, share) => sum + share, 0) / round.workers.length;
  return capacity({ ...round, workers: round.workers.map(() => mean) });
}

/** A run's medians over its rounds, and each round's split of the CPU between the workers. */
export interface RunSummary {
  readonly concurrency: number;
  readonly spread: Spread;
  readonly requestsPerSecond: number;
  /** CPU microseconds a request, all processes of the proxy together. */
  readonly cpuUsPerRequest: number;
  readonly capacity: number;
  readonly evenCapacity: number;
  /** The most the supervisor used in any round. */
  readonly supervisor: number;
  /** Each round's workers' shares of a CPU. */
  readonly workers: readonly (readonly number[])[];
  /** Each round's connections by worker. */
  readonly connections: readonly (readonly number[])[];
}

export function summarizeRun(run: ScalingRun): RunSummary {
  const { concurrency, spread, rounds } = run;
  if (rounds.length === 0) throw new ScalingReportError(`no rounds at --concurrency ${concurrency}`);
  for (const round of rounds) {
    if (round.workers.length !== concurrency || round.connections.length !== concurrency) {
      throw new ScalingReportError(`a round at --concurrency ${concurrency} measured ${round.workers.length} workers, counted ${round.connections.length}`);
    }
  }
  const cpuUs = (round: ScalingRound): number => ((round.supervisor + round.workers.reduce((sum, share) => sum + share, 0)) * 1e6) / round.requestsPerSecond;
  return {
    concurrency,
    spread,
    requestsPerSecond: median(rounds.map((round) => round.requestsPerSecond)),
    cpuUsPerRequest: median(rounds.map(cpuUs)),
    capacity: median(rounds.map(capacity)),
    evenCapacity: median(rounds.map(evenCapacity)),
    supervisor: Math.max(...rounds.map((round) => round.supervisor)),
    workers: rounds.map((round) => round.workers),
    connections: rounds.map((round) => round.connections),
  };
}

/** The runs at `--concurrency 2`, in the order they run and print; the last is the target's. */
export const SPREADS: readonly Spread[] = ['shared socket', 'reuse_port', 'exact_balance'];

/**
 * The lines `make bench` prints; `placement` says where the processes ran.
 * @param one `--concurrency 1`, sharing the socket
 * @param twos `--concurrency 2`, one run for each of SPREADS, in that order
 */
export function formatScalingReport(one: ScalingRun, twos: readonly ScalingRun[], placement: string): string {
  if (one.concurrency !== 1 || one.spread !== 'shared socket' || twos.length !== SPREADS.length || twos.some((run, i) => run.concurrency !== 2 || run.spread !== SPREADS[i])) {
    throw new ScalingReportError(`the runs are --concurrency 1, then 2 with each of: ${SPREADS.join(', ')}`);
  }
  const runs = [summarizeRun(one), ...twos.map(summarizeRun)];
  const base = runs[0]!.capacity;
  const ratios = (run: RunSummary): string => `${run.spread} ${(run.capacity / base).toFixed(2)}x (split evenly ${(run.evenCapacity / base).toFixed(2)}x)`;
  const judged = runs[runs.length - 1]!;
  const ratio = judged.capacity / base;
  const percent = (share: number): string => `${Math.round(share * 100)}%`;
  return [
    `worker scaling (the proxy row's configuration and load, a new wrk each round; ${placement})`,
    ...runs.map(
      (run) =>
        `  --concurrency ${run.concurrency}${run.concurrency > 1 ? `, ${run.spread}` : ''}: ${formatCount(run.requestsPerSecond)} req/s, ${run.cpuUsPerRequest.toFixed(1)} us of CPU a request, ` +
        `capacity ${formatCount(run.capacity)} req/s${run.concurrency > 1 ? ` (${formatCount(run.evenCapacity)} split evenly)` : ''}; supervisor at most ${percent(run.supervisor)}\n` +
        `    by round, each worker's CPU: ${run.workers.map((shares) => shares.map(percent).join(' + ')).join(', ')}; ` +
        `its connections: ${run.connections.map((counts) => counts.join(' + ')).join(', ')}`,
    ),
    `  --concurrency 2 against 1, by capacity: ${runs.slice(1).map(ratios).join(', ')}`,
    `  --concurrency 2 with ${judged.spread} against 1: ${ratio.toFixed(2)}x (target: at least ${SCALING_TARGET.toFixed(2)}x)  ${ratio >= SCALING_TARGET ? 'met' : 'not met'}`,
    `  (capacity: requests per second over the busiest process's share of a CPU, what the proxy serves when that process has a CPU to itself)`,
  ].join('\n');
}
