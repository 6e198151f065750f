// proxy.overload_actions.shrink_heap (Envoy's HeapShrinker): while the action is active, every
// 10 s, the worker gives memory back. A full collection first, so that the buffers and objects
// nobody holds any more are freed (V8 would wait for allocation to start one; vm.measureMemory's
// eager execution is Node's public way to start it now), then glibc's free memory, which
// MALLOC_TOP_PAD_ keeps on purpose in normal times (src/server/worker_launch.ts), goes back to
// the kernel.

import * as vm from 'node:vm';
import { releaseFreeMemory } from '../native/addon';
import type { Counter } from '../stats/stats';

/** Envoy's interval between two shrinks. */
const SHRINK_INTERVAL_MS = 10_000;

export class HeapShrinker {
  private timer: NodeJS.Timeout | null = null;

  /** @param shrinks overload.proxy.overload_actions.shrink_heap.shrink_count */
  constructor(private readonly shrinks: Counter) {}

  setActive(active: boolean): void {
    if (active && this.timer === null) {
      // Unreferenced: it never keeps a worker alive.
      this.timer = setInterval(() => void this.shrink(), SHRINK_INTERVAL_MS).unref();
    } else if (!active) this.close();
  }

  close(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  private async shrink(): Promise<void> {
    // Without the collection (it cannot fail but in a dying isolate), trimming still helps.
    await vm.measureMemory({ execution: 'eager' }).catch(() => undefined);
    releaseFreeMemory();
    this.shrinks.inc();
  }
}
