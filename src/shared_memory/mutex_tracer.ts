// --enable-mutex-tracing (Envoy's MutexTracerImpl): each contention event adds one to the count
// and its wait to the lifetime total; the latest wait is kept as the current one. The waits
// measured are waits on the stats region's structural locks (a segment or block another
// process is adding), the one place where a process waits for another: the supervisor's are
// recorded here directly, each worker's reach it as reports (merge) over the IPC channel.

export interface MutexStats {
  readonly numContentions: number;
  readonly currentWaitCycles: number;
  readonly lifetimeWaitCycles: number;
}

export class MutexTracer {
  private contentions = 0;
  private currentWait = 0;
  private lifetimeWait = 0;

  /** A wait of `cycles` iterations of a spin loop. */
  readonly record = (cycles: number): void => {
    this.contentions++;
    this.currentWait = cycles;
    this.lifetimeWait += cycles;
  };

  /** Adds the waits another process recorded since its previous report; its latest is current. */
  merge(report: MutexStats): void {
    this.contentions += report.numContentions;
    this.currentWait = report.currentWaitCycles;
    this.lifetimeWait += report.lifetimeWaitCycles;
  }

  stats(): MutexStats {
    return { numContentions: this.contentions, currentWaitCycles: this.currentWait, lifetimeWaitCycles: this.lifetimeWait };
  }
}
