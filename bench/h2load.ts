// Runs h2load (nghttp2's HTTP/2 load generator) and reads its report. The parser is pure so
// that it is tested on recorded output; a report without totals is an error, never zeros.

import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pinnedTo } from './cpu_pinning';
import type { LoadResult } from './load_result';
import { describeExit, type ProcessGroups } from './process_group';

export interface H2loadRun {
  readonly url: string;
  readonly connections: number;
  /** Concurrent streams per connection. */
  readonly streams: number;
  readonly durationSeconds: number;
  /** Null when nothing is pinned. */
  readonly cpu: number | null;
  /** A file each request POSTs as its body (h2load -d); GET when absent. */
  readonly bodyPath?: string;
}

export class H2loadOutputError extends Error {
  override readonly name = 'H2loadOutputError';
}

export class H2loadRunError extends Error {
  override readonly name = 'H2loadRunError';
}

const SECONDS_UNIT: Readonly<Record<string, number>> = { us: 1e-6, ms: 1e-3, s: 1 };

/** The summary lines of `h2load -D`: `finished in`, `requests:` and `status codes:`. */
export function parseH2loadOutput(text: string): LoadResult {
  const finished = /^finished in (\d+(?:\.\d+)?)(us|ms|s), (\d+(?:\.\d+)?) req\/s/m.exec(text);
  const requests = /^requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout$/m.exec(text);
  const codes = /^status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx$/m.exec(text);
  if (!finished || !requests || !codes) throw new H2loadOutputError(`no request totals in h2load output:\n${text}`);
  return {
    requests: Number(requests[3]),
    durationUs: Number(finished[1]) * (SECONDS_UNIT[finished[2] as string] as number) * 1e6,
    requestsPerSecond: Number(finished[3]),
    latency: null,
    errorResponses: Number(codes[3]) + Number(codes[4]),
    // h2load counts requests, not sockets: an errored request lost its stream or connection.
    socketErrors: { connect: 0, read: Number(requests[6]), write: 0, timeout: Number(requests[7]) },
  };
}

// As for wrk: h2load stops by itself; the slack covers a slow start or exit on a busy machine.
const EXIT_SLACK_MS = 15_000;

export async function runH2load(processes: ProcessGroups, run: H2loadRun): Promise<LoadResult> {
  const { command, args } = pinnedTo(run.cpu, 'h2load', [
    '-t1',
    `-c${run.connections}`,
    `-m${run.streams}`,
    `-D${run.durationSeconds}`,
    ...(run.bodyPath === undefined ? [] : ['-d', run.bodyPath]),
    run.url,
  ]);
  const h2load = processes.spawn('h2load', command, args);
  const deadline = setTimeout(() => void processes.stop(h2load), run.durationSeconds * 1000 + EXIT_SLACK_MS);
  const status = await h2load.exited.finally(() => clearTimeout(deadline));
  if (status.code !== 0) {
    throw new H2loadRunError(`h2load ${describeExit(status)}: ${(h2load.stderr() || h2load.stdout()).trim()}`);
  }
  return parseH2loadOutput(h2load.stdout());
}

/** A file of `bytes` bytes in `dir` for h2load -d to post (written once); its path. */
export function requestBodyFile(dir: string, bytes: number): string {
  const path = join(dir, `request-body-${bytes}`);
  if (!existsSync(path)) writeFileSync(path, 'x'.repeat(bytes));
  return path;
}
