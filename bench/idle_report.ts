// What the idle-connection benchmark reports: how many keep-alive connections the proxy held, and
// the worker's RSS for each, against the targets (10,000 held; at most 4 KiB each). Pure.

import { formatCount } from './table';

export const IDLE_CONNECTIONS = 10_000;
/** The most RSS an idle keep-alive downstream connection may cost the worker. */
export const IDLE_RSS_TARGET_BYTES = 4096;

export interface IdleResult {
  /** Connections opened, each served one request and left open. */
  readonly opened: number;
  /** Of those, how many the proxy closed. */
  readonly closedByProxy: number;
  /** The listener's downstream_cx_active once every connection was served. */
  readonly active: number;
  /** The worker's RSS in KiB before the first connection, at half of them, and with all of them. */
  readonly rssKiB: readonly [number, number, number];
}

/**
 * Bytes of RSS each connection of the second half added. The first half also grows what the worker
 * sizes once to its load (the young generation, the allocator's kept heap), so it overstates.
 */
export function bytesPerConnection(result: IdleResult): number {
  const half = result.opened - Math.floor(result.opened / 2);
  return ((result.rssKiB[2] - result.rssKiB[1]) * 1024) / half;
}

/** The soft "Max open files" of a /proc/<pid>/limits text; Infinity when unlimited. */
export function softOpenFilesLimit(limits: string): number {
  const soft = /^Max open files\s+(\S+)/m.exec(limits)?.[1];
  if (soft === undefined) throw new Error('no "Max open files" line in the limits');
  return soft === 'unlimited' ? Infinity : Number(soft);
}

/** The lines `make bench` prints. */
export function formatIdleReport(result: IdleResult): string {
  const held = result.closedByProxy === 0 && result.active === result.opened;
  const perConnection = bytesPerConnection(result);
  const firstHalf = ((result.rssKiB[1] - result.rssKiB[0]) * 1024) / Math.floor(result.opened / 2);
  return [
    `idle keep-alive connections (--concurrency 1; each served one request, then left open)`,
    `  held:                   ${formatCount(result.active)} of ${formatCount(result.opened)} active, ${formatCount(result.closedByProxy)} closed by the proxy (target: ${formatCount(IDLE_CONNECTIONS)} without error)  ${held ? 'met' : 'not met'}`,
    `  worker RSS per connection: ${formatCount(Math.round(perConnection))} bytes over the second half, ${formatCount(Math.round(firstHalf))} over the first (target: at most ${formatCount(IDLE_RSS_TARGET_BYTES)})  ${perConnection <= IDLE_RSS_TARGET_BYTES ? 'met' : 'not met'}`,
  ].join('\n');
}
