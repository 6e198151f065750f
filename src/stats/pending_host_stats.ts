// The per-host statistics of a host a worker made before the supervisor gave it a slot (an
// ORIGINAL_DST destination seen first): they count in the worker until the slot comes, then
// move into it, so that /clusters counts the host's first connections and requests too and a
// gauge raised before the move is lowered after it in the same place.

import { HOST_STAT_NAMES } from '../shared_memory/region_layout';
import type { Counter, Gauge, HostStats } from './stats';

/** A gauge (or counter) that counts locally until it is relayed to its shared stat. */
class RelayedStat implements Gauge {
  private local = 0;
  private target: Counter | Gauge | null = null;

  constructor(readonly name: string) {}

  inc(): void {
    this.add(1);
  }

  dec(): void {
    this.add(-1);
  }

  add(n: number): void {
    if (this.target === null) this.local += n;
    else this.target.add(n);
  }

  sub(n: number): void {
    this.add(-n);
  }

  set(v: number): void {
    this.add(v - this.value());
  }

  value(): number {
    return this.target === null ? this.local : this.target.value();
  }

  /** Its count moves when the slot comes: only JavaScript may write it. */
  statCell(): null {
    return null;
  }

  /** What counted so far goes to `target`, and from now on everything does. */
  relayTo(target: Counter | Gauge): void {
    if (this.target !== null) return;
    if (this.local !== 0) target.add(this.local);
    this.local = 0;
    this.target = target;
  }
}

export class PendingHostStats implements HostStats {
  readonly cx_total = new RelayedStat('cx_total');
  readonly cx_active = new RelayedStat('cx_active');
  readonly cx_connect_fail = new RelayedStat('cx_connect_fail');
  readonly rq_total = new RelayedStat('rq_total');
  readonly rq_timeout = new RelayedStat('rq_timeout');
  readonly rq_success = new RelayedStat('rq_success');
  readonly rq_error = new RelayedStat('rq_error');
  readonly rq_active = new RelayedStat('rq_active');

  /** The host has its slot: its counts so far join `shared`, the slot's statistics, and later ones go there. */
  settle(shared: HostStats): void {
    for (const name of HOST_STAT_NAMES) this[name].relayTo(shared[name]);
  }
}
