// Runs wrk and reads its report. The parser is pure so that it is tested on recorded output;
// a report without throughput or latency percentiles is an error, never a row of zeros.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pinnedTo } from './cpu_pinning';
import { type LoadResult, NO_SOCKET_ERRORS } from './load_result';
import { describeExit, type ProcessGroups } from './process_group';

export interface WrkRun {
  readonly url: string;
  readonly connections: number;
  readonly threads: number;
  readonly durationSeconds: number;
  /** Null when nothing is pinned. */
  readonly cpu: number | null;
  /** Sends `connection: close`, so that each request opens (and with TLS, handshakes) a connection. */
  readonly closeEachRequest?: boolean;
  /** Each connection waits this many milliseconds after a response (wrk's Lua `delay()`). */
  readonly pacedMs?: number;
}

/** wrk's script for a paced run: its delay() hook returns the wait before each connection's next request. */
export function pacingScript(ms: number): string {
  return `function delay()\n  return ${ms}\nend\n`;
}

export class WrkOutputError extends Error {
  override readonly name = 'WrkOutputError';
}

export class WrkRunError extends Error {
  override readonly name = 'WrkRunError';
}

// wrk prints times scaled to the largest unit that keeps the number >= 1 (units.c).
const MICROSECONDS_PER_UNIT: Readonly<Record<string, number>> = {
  us: 1,
  ms: 1e3,
  s: 1e6,
  m: 60e6,
  h: 3600e6,
};

/** A wrk time such as `806.00us`, `1.01ms` or `10.00s`, in microseconds. */
export function parseWrkTime(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(us|ms|s|m|h)$/.exec(text);
  const scale = match ? MICROSECONDS_PER_UNIT[match[2] as string] : undefined;
  if (!match || scale === undefined) throw new WrkOutputError(`unrecognized wrk time '${text}'`);
  return Number(match[1]) * scale;
}

/** The report of `wrk --latency`. */
export function parseWrkOutput(text: string): LoadResult {
  const totals = /^\s*(\d+) requests in (\S+), /m.exec(text);
  const rate = /^Requests\/sec:\s*(\d+(?:\.\d+)?)$/m.exec(text);
  if (!totals || !rate) throw new WrkOutputError(`no request totals in wrk output:\n${text}`);
  const socket = /^\s*Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)$/m.exec(text);
  const errorResponses = /^\s*Non-2xx or 3xx responses: (\d+)$/m.exec(text);
  return {
    requests: Number(totals[1]),
    durationUs: parseWrkTime(totals[2] as string),
    requestsPerSecond: Number(rate[1]),
    latency: {
      p50Us: percentile(text, 50),
      p75Us: percentile(text, 75),
      p90Us: percentile(text, 90),
      p99Us: percentile(text, 99),
    },
    errorResponses: errorResponses ? Number(errorResponses[1]) : 0,
    socketErrors: socket
      ? { connect: Number(socket[1]), read: Number(socket[2]), write: Number(socket[3]), timeout: Number(socket[4]) }
      : NO_SOCKET_ERRORS,
  };
}

function percentile(text: string, percent: number): number {
  const match = new RegExp(`^\\s*${percent}%\\s+(\\S+)$`, 'm').exec(text);
  if (!match) throw new WrkOutputError(`no ${percent}% latency in wrk output (was --latency given?):\n${text}`);
  return parseWrkTime(match[1] as string);
}

// wrk stops by itself after its duration; the slack covers a slow start or exit on a busy machine,
// and a wrk that hangs past it is stopped rather than waited for.
const EXIT_SLACK_MS = 15_000;

export async function runWrk(processes: ProcessGroups, run: WrkRun): Promise<LoadResult> {
  const scriptDir = run.pacedMs === undefined ? null : mkdtempSync(join(tmpdir(), 'proxy-bench-wrk-'));
  const script = scriptDir === null ? null : join(scriptDir, 'paced.lua');
  if (script !== null) writeFileSync(script, pacingScript(run.pacedMs!));
  const { command, args } = pinnedTo(run.cpu, 'wrk', [
    `-t${run.threads}`,
    `-c${run.connections}`,
    `-d${run.durationSeconds}s`,
    '--latency',
    ...(run.closeEachRequest === true ? ['-H', 'Connection: close'] : []),
    ...(script === null ? [] : ['-s', script]),
    run.url,
  ]);
  const wrk = processes.spawn('wrk', command, args);
  const deadline = setTimeout(() => void processes.stop(wrk), run.durationSeconds * 1000 + EXIT_SLACK_MS);
  const status = await wrk.exited.finally(() => {
    clearTimeout(deadline);
    if (scriptDir !== null) rmSync(scriptDir, { recursive: true, force: true });
  });
  if (status.code !== 0) {
    throw new WrkRunError(`wrk ${describeExit(status)}: ${(wrk.stderr() || wrk.stdout()).trim()}`);
  }
  return parseWrkOutput(wrk.stdout());
}
