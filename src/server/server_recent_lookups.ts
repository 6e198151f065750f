// /stats/recentlookups across the processes of one epoch: each process remembers its own
// lookups (SharedStatsStore.recentLookups); enable, disable and clear reach every one, and a
// read gathers them all. A worker (re)started later is told the capacity in its init message.

import type { ProcessLookups } from '../stats/recent_lookups';
import type { SharedStatsStore } from '../stats/store';
import type { WorkerPool } from './worker_pool';
import { type WorkerMessage, type WorkerRecentLookups, WORKER_PROTOCOL_VERSION } from './worker_protocol';

export interface ServerRecentLookupsDeps {
  readonly store: SharedStatsStore;
  /** Null before the workers are forked. */
  readonly workers: () => WorkerPool | null;
  /** How long a read waits for a worker; one that does not answer is left out. */
  readonly replyTimeoutMs: number;
}

export class ServerRecentLookups {
  constructor(private readonly deps: ServerRecentLookupsDeps) {}

  get capacity(): number {
    return this.deps.store.recentLookups.capacity;
  }

  setCapacity(capacity: number): void {
    this.deps.store.recentLookups.setCapacity(capacity);
    this.deps.workers()?.broadcast({ v: WORKER_PROTOCOL_VERSION, type: 'recent_lookups_capacity', capacity });
  }

  clear(): void {
    this.deps.store.clearRecentLookups();
    this.deps.workers()?.broadcast({ v: WORKER_PROTOCOL_VERSION, type: 'recent_lookups_clear' });
  }

  /** The supervisor's lookups, then those of every worker that answered. */
  async collect(): Promise<ProcessLookups[]> {
    const own = this.deps.store.recentLookups.snapshot();
    const workers = this.deps.workers();
    if (workers === null) return [own];
    const replies = await workers.ask(
      (id) => ({ v: WORKER_PROTOCOL_VERSION, type: 'recent_lookups_request', id }),
      (m: WorkerMessage, id): m is WorkerRecentLookups => m.type === 'recent_lookups' && m.id === id,
      this.deps.replyTimeoutMs,
    );
    return [own, ...replies.flatMap((r) => (r.reply === null ? [] : [r.reply.lookups]))];
  }
}
