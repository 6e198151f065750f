// The bootstrap's stats sinks as the supervisor flushes them: every tick hands each sink the stats
// with each counter's increase since the tick before (since the epoch started, at the first). A
// sink that throws loses that flush, never the others or the supervisor.

import type { Logger } from '../../log/logger_api';
import type { ScalarList, StatsSnapshot } from '../sample';
import { CounterDeltas } from './counter_deltas';
import type { StatsSink } from './stats_sink';

export class StatsSinks {
  private readonly deltas = new CounterDeltas();

  /** Lines under this file's name. */
  private readonly log: Logger;

  constructor(
    private readonly sinks: readonly StatsSink[],
    log: Logger,
  ) {
    this.log = log.forFile(__filename);
  }

  /**
   * The counters as this epoch finds them, before it counts anything: what the stats region
   * held already (a hot-restart parent's counts, which the parent has sent) is not sent again.
   */
  baseline(scalars: ScalarList): void {
    this.deltas.update(scalars);
  }

  flush(stats: StatsSnapshot, timestampMs: number): void {
    const snapshot = { ...stats, counterDeltas: this.deltas.update(stats.scalars), timestampMs };
    for (const sink of this.sinks) {
      try {
        sink.flush(snapshot);
      } catch (error) {
        this.log.error(`stats sink flush failed: ${(error as Error).message}`);
      }
    }
  }

  close(): void {
    for (const sink of this.sinks) sink.close();
  }
}
