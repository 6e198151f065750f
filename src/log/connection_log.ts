// Envoy's connection and stream log lines: a connection's lines start `[C<id>] `, a stream's
// `[C<id>][S<id>] `, and header maps print one `'name', 'value'` line per header. Every caller
// checks `log.enabled(level)` first, so nothing here runs while its level is off.

import type { Logger } from './logger_api';

/**
 * Connection and stream ids. Envoy numbers the connections of its one process, downstream and
 * upstream alike, from one counter. Here the supervisor (admin) and each worker number their
 * own, interleaved by process slot (supervisor 0, worker i at i + 1, of workers + 1 slots):
 * an id names one connection among the processes running at once in an epoch, and its slot
 * tells which one logged it. A restarted worker counts again from its slot, so its ids repeat
 * those of the worker it replaced (its pid in the log line tells them apart); a new epoch too.
 */
export class ConnectionIds {
  private connections = 0;
  private streams = 0;

  private constructor(
    private readonly slot: number,
    private readonly slots: number,
  ) {}

  /** The supervisor's, of a proxy of `workers` workers: 0, workers + 1, ... */
  static forSupervisor(workers: number): ConnectionIds {
    return new ConnectionIds(0, workers + 1);
  }

  /** Worker `index`'s, of `workers`: index + 1, index + 1 + (workers + 1), ... */
  static forWorker(index: number, workers: number): ConnectionIds {
    return new ConnectionIds(index + 1, workers + 1);
  }

  /** Ids for a process alone (a data plane built for a check): 0, 1, 2... */
  static forOneProcess(): ConnectionIds {
    return new ConnectionIds(0, 1);
  }

  nextConnection(): number {
    return this.slot + this.slots * this.connections++;
  }

  nextStream(): number {
    return this.slot + this.slots * this.streams++;
  }
}

/**
 * The loggers and ids of upstream connections: one per worker, shared by every cluster's pools.
 * Each logger is already taken for the file that writes its lines (Logger.forFile), once here
 * rather than per pool or connection.
 */
export interface UpstreamConnectionLogs {
  readonly ids: ConnectionIds;
  /** `connection`: the socket's own events. */
  readonly connection: Logger;
  /** `pool`, of each codec: which connection a request gets. */
  readonly http1Pool: Logger;
  readonly http2Pool: Logger;
  /** `client`, of each codec: the codec client on the connection. */
  readonly http1Client: Logger;
  readonly http2Client: Logger;
}

/**
 * A header map as Envoy's debug lines print it: `'name', 'value'` and a newline for each pair of
 * `pairs` ([name, value, ...]), pseudo-headers first as the caller puts them.
 */
export function headerDump(pairs: readonly string[]): string {
  let text = '';
  for (let i = 0; i < pairs.length; i += 2) text += `'${pairs[i]}', '${pairs[i + 1]}'\n`;
  return text;
}

/**
 * headerDump of an HTTP/1 message head as written (`HTTP/1.1 200 OK\r\nname: value\r\n...`): the
 * status as `:status`, then each header line.
 */
export function http1HeadDump(head: string): string {
  const lines = head.split('\r\n');
  let text = `':status', '${lines[0].split(' ', 2)[1] ?? ''}'\n`;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i];
    const colon = line.indexOf(':');
    if (colon > 0) text += `'${line.slice(0, colon).toLowerCase()}', '${line.slice(colon + 1).trim()}'\n`;
  }
  return text;
}
