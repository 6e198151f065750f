// Each counter's increase from one flush to the next (Envoy latches a counter's pending
// increments at every flush): its value now less its value at the previous flush, kept by the
// counter's slot, which never names another stat. A counter first seen gained all it holds. A
// value that went down (POST /reset_counters) gained what it reads since the reset; what came
// between the previous flush and the reset is lost, as Envoy's reset drops it too. Pure.

import type { ScalarList } from '../sample';

export class CounterDeltas {
  /** By slot: the value at the previous flush (0 for a counter not seen yet). */
  private previous = new Float64Array(0);

  /**
   * Ends a period: each counter's increase since the previous call, by position in `scalars`
   * (0 for gauges, and for a counter without a slot, whose value cannot be told apart).
   */
  update(scalars: ScalarList): Float64Array {
    const deltas = new Float64Array(scalars.length);
    for (let i = 0; i < scalars.length; i++) {
      const id = scalars.id(i);
      if (id < 0 || !scalars.isCounter(i)) continue;
      if (id >= this.previous.length) this.grow(id + 1);
      const value = scalars.value(i);
      const before = this.previous[id]!;
      deltas[i] = value >= before ? value - before : value;
      this.previous[id] = value;
    }
    return deltas;
  }

  private grow(size: number): void {
    const grown = new Float64Array(Math.max(size, this.previous.length * 2));
    grown.set(this.previous);
    this.previous = grown;
  }
}
