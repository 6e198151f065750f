// A worker's side of --enable-mutex-tracing: its waits on the stats region's locks are sent to
// the supervisor, whose tracer GET /contention reads. Sent rather than kept here, so that the
// counts outlive a worker that dies and /contention never waits on a worker (one may be the
// very process spinning on the lock).

import { MutexStats, MutexTracer } from '../shared_memory/mutex_tracer';

export class ContentionReporter {
  private batch: MutexTracer | null = null;

  constructor(private readonly send: (report: MutexStats) => void) {}

  /** The region's ContentionObserver: the waits of one turn of the event loop make one report. */
  readonly record = (cycles: number): void => {
    if (this.batch === null) {
      const batch = (this.batch = new MutexTracer());
      setImmediate(() => {
        this.batch = null;
        this.send(batch.stats());
      });
    }
    this.batch.record(cycles);
  };
}
