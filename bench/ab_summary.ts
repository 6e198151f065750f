// The arithmetic of an A/B comparison. BASE (A) and HEAD (B) run the same row in every round,
// in alternating order; each build reports the median and range of its CPU per request over the
// rounds, and HEAD/BASE is given three times: as the ratio of the medians; as the median of each
// round's own ratio, in which a drift of the machine during the run cancels out; and as the ratio
// of the minima, which a row whose rounds fall in two modes (a machine that is sometimes slower
// for a while) does not split, where the median may fall between the modes.

import { median, roundCpuUsPerRequest, summarize, SummaryError, type Round, type RowSummary } from './summary';

export type Build = 'base' | 'head';

export const BUILD_NAMES: Readonly<Record<Build, string>> = { base: 'BASE', head: 'HEAD' };

/** A first in even rounds, B first in odd ones, so that neither always runs on a warmer machine. */
export function buildOrder(round: number): readonly [Build, Build] {
  return round % 2 === 0 ? ['base', 'head'] : ['head', 'base'];
}

export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

export function spread(values: readonly number[]): Spread {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) };
}

/** One round of a row: the run of each build. */
export interface RoundPair {
  readonly base: Round;
  readonly head: Round;
}

export interface BuildSummary {
  /** Medians of req/s and latency, errors summed over the rounds. */
  readonly summary: RowSummary;
  /** CPU us per request over the rounds. */
  readonly cpu: Spread;
}

export interface Comparison {
  readonly base: BuildSummary;
  readonly head: BuildSummary;
  /** HEAD's median CPU per request over BASE's: below 1, HEAD is cheaper. */
  readonly ratioOfMedians: number;
  /** HEAD/BASE of each round's pair. */
  readonly roundRatios: Spread;
  /** HEAD's cheapest round over BASE's. */
  readonly ratioOfMinima: number;
}

export function compareRounds(pairs: readonly RoundPair[], ticksPerSecond: number): Comparison {
  if (pairs.length === 0) throw new SummaryError('no rounds to compare');
  const cpu = (build: Build): number[] =>
    pairs.map((pair, index) => cpuUsPerRequestOf(pair[build], ticksPerSecond, `round ${index + 1} of ${BUILD_NAMES[build]}`));
  const baseCpu = cpu('base');
  const headCpu = cpu('head');
  const base = { summary: summarize(pairs.map((pair) => pair.base), ticksPerSecond), cpu: spread(baseCpu) };
  const head = { summary: summarize(pairs.map((pair) => pair.head), ticksPerSecond), cpu: spread(headCpu) };
  return {
    base,
    head,
    ratioOfMedians: head.cpu.median / base.cpu.median,
    roundRatios: spread(headCpu.map((value, index) => value / (baseCpu[index] as number))),
    ratioOfMinima: head.cpu.min / base.cpu.min,
  };
}

/** A run that completed no request, or that used no measurable CPU, has no cost to compare. */
function cpuUsPerRequestOf(round: Round, ticksPerSecond: number, what: string): number {
  const value = roundCpuUsPerRequest(round, ticksPerSecond);
  if (value === null || value === 0) {
    throw new SummaryError(`${what} has no CPU per request (${round.load.requests} requests, ${round.cpuTicks ?? 'no'} CPU ticks)`);
  }
  return value;
}
