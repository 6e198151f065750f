// A lock word in shared memory holding the owner's pid, for the rare structural changes of the
// stats region (a new segment, a new section, a host slot). Writers never take it to count.
// A lock left by a process that died is taken over.

import { processAlive } from './process_alive';

const SPINS_BETWEEN_LIVENESS_CHECKS = 1 << 12;

/** Told of each wait for another process, in spin iterations (--enable-mutex-tracing). */
export type ContentionObserver = (spins: number) => void;

function acquireSpinLock(words: Int32Array, index: number, pid: number, onWait?: ContentionObserver | null): void {
  for (let spins = 0; ; spins++) {
    const holder = Atomics.compareExchange(words, index, 0, pid);
    if (holder === 0) {
      if (spins > 0) onWait?.(spins);
      return;
    }
    if (spins % SPINS_BETWEEN_LIVENESS_CHECKS === SPINS_BETWEEN_LIVENESS_CHECKS - 1 && !processAlive(holder)) {
      Atomics.compareExchange(words, index, holder, 0);
    }
  }
}

function releaseSpinLock(words: Int32Array, index: number, pid: number): void {
  Atomics.compareExchange(words, index, pid, 0);
}

export function withSpinLock<T>(words: Int32Array, index: number, pid: number, onWait: ContentionObserver | null, fn: () => T): T {
  acquireSpinLock(words, index, pid, onWait);
  try {
    return fn();
  } finally {
    releaseSpinLock(words, index, pid);
  }
}
