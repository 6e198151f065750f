// A stats store that only names: every stat it hands out carries its name and keeps nothing.
// Building the data plane from the configuration in `--mode validate` and in the supervisor
// goes through the constructors a worker runs, which name their stats; no region exists there.

import { HOST_RECORD_WORDS } from '../shared_memory/region_layout';
import { SharedCounts, sharedCountsBytes } from './shared_counts';
import type { Counter, Gauge, Histogram, HostStats, ScalarSet, Scope, StatReader, StatsStore } from './stats';

function counter(name: string): Counter {
  return { name, inc: () => undefined, add: () => undefined, value: () => 0, statCell: () => null };
}

function gauge(name: string): Gauge {
  const nothing = () => undefined;
  return { name, inc: nothing, dec: nothing, add: nothing, sub: nothing, set: nothing, value: () => 0, statCell: () => null };
}

class NamingScope implements Scope {
  constructor(private readonly prefix: string) {}

  counter(name: string): Counter {
    return counter(this.name(name));
  }

  gauge(name: string): Gauge {
    return gauge(this.name(name));
  }

  histogram(name: string): Histogram {
    return { name: this.name(name), recordValue: () => undefined };
  }

  scope(prefix: string): Scope {
    return new NamingScope(this.name(prefix));
  }

  private name(name: string): string {
    return this.prefix === '' ? name : `${this.prefix}.${name}`;
  }
}

export class NamingStatsStore extends NamingScope implements StatsStore {
  constructor() {
    super('');
  }

  scalars(prefix: string, counters: readonly string[], gauges: readonly string[]): ScalarSet {
    return { counters: counters.map((name) => counter(prefix + name)), gauges: gauges.map((name) => gauge(prefix + name)) };
  }

  /** Names only: nothing is ever counted here. */
  hostStatSum(): StatReader {
    return { value: () => 0 };
  }

  /** A record of its own, which nobody reads. */
  hostRecord(): { words: Int32Array; index: number } {
    return { words: new Int32Array(HOST_RECORD_WORDS), index: 0 };
  }

  cells(_name: string, count: number): SharedCounts {
    return new SharedCounts(new Int32Array(sharedCountsBytes(count) / 4), 0, count, 0);
  }

  hostStats(): HostStats {
    return {
      cx_total: counter('cx_total'),
      cx_active: gauge('cx_active'),
      cx_connect_fail: counter('cx_connect_fail'),
      rq_total: counter('rq_total'),
      rq_timeout: counter('rq_timeout'),
      rq_success: counter('rq_success'),
      rq_error: counter('rq_error'),
      rq_active: gauge('rq_active'),
    };
  }
}
