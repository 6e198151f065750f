// Long loops in the supervisor run in slices with a turn of the event loop between them, so that
// admin requests, signals and xDS traffic are served meanwhile: a 10,000-cluster update must not
// hold the event loop for seconds.

import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * Calls `each` on the items in order, `sliceSize` of them per turn of the event loop; stops
 * before the next slice once `stopped()` says so.
 * @returns whether every item was handled
 */
export async function forEachInSlices<T>(
  items: readonly T[],
  sliceSize: number,
  each: (item: T, index: number) => void,
  stopped: () => boolean = () => false,
): Promise<boolean> {
  for (let start = 0; start < items.length; start += sliceSize) {
    if (start > 0) {
      await nextTurn();
      if (stopped()) return false;
    }
    const end = Math.min(start + sliceSize, items.length);
    for (let i = start; i < end; i++) each(items[i]!, i);
  }
  return true;
}
