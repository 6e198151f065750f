// While a worker is busy, the small writes one turn of its event loop makes to HTTP/1 connections
// leave together at the turn's end: each connection's writer holds them from its first such write
// until the turn's I/O has all been handled (setImmediate runs then). Waking the process that reads
// a write can cost more than the write (an interprocessor interrupt, on a virtual machine an exit
// to the host): writes spread over a busy turn wake an idle peer once each, writes made back to
// back find it awake after the first. A worker with time to spare writes at once instead: its
// peers then work on each write while it handles the next, where a held write would wait.

import type { Clock, IntervalHandle } from '../common/clock';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';

/** A writer that holds its small writes until flushBatched(). */
export interface BatchedWriter {
  flushBatched(): void;
}

/** How often the worker's event loop utilization is read. */
const SAMPLE_MS = 100;
/** Writes are held from a period busier than this... */
const HOLD_ABOVE = 0.8;
/** ...until one quieter than this. */
const RELEASE_BELOW = 0.6;

/** Whether writes are held after a period of `utilization` (0-1), given whether they were. Pure. */
export function holdsAfter(holding: boolean, utilization: number): boolean {
  return holding ? utilization >= RELEASE_BELOW : utilization > HOLD_ABOVE;
}

export class WriteBatch {
  private writers: BatchedWriter[] = [];
  /** The array last flushed, reused for the next turn's writers. */
  private spare: BatchedWriter[] = [];
  private scheduled = false;
  private holding = false;
  private last: EventLoopUtilization;
  private readonly sampler: IntervalHandle;

  constructor(private readonly clock: Clock) {
    this.last = performance.eventLoopUtilization();
    this.sampler = clock.setInterval(this.sample, SAMPLE_MS);
  }

  /** Small writes wait for the end of the turn now (the worker was busy). */
  get holds(): boolean {
    return this.holding;
  }

  /** `writer` holds writes: it is flushed at the end of this turn. */
  add(writer: BatchedWriter): void {
    this.writers.push(writer);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.flush);
  }

  close(): void {
    this.clock.clearInterval(this.sampler);
  }

  private readonly sample = (): void => {
    const now = performance.eventLoopUtilization();
    this.holding = holdsAfter(this.holding, performance.eventLoopUtilization(now, this.last).utilization);
    this.last = now;
  };

  private readonly flush = (): void => {
    const writers = this.writers;
    // Writers added while these flush (a watermark callback that writes) wait for the next turn.
    this.writers = this.spare;
    this.scheduled = false;
    for (let i = 0; i < writers.length; i++) writers[i]!.flushBatched();
    writers.length = 0;
    this.spare = writers;
  };
}
