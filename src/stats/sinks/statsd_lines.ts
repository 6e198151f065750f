// Statsd lines as Envoy 1.16's statsd sinks write them: `<prefix>.<name>:<value>|<type>`, the
// type `c` for a counter's increase since the previous flush, `g` for a gauge's value, `ms` for
// one histogram sample (Envoy sends every histogram as a timer, a line per recorded value).
// The statsd sink names a stat by its full name; the DogStatsD sink by its tag-extracted name,
// with its tags after the type: `|#<tag>:<value>,...`. Pure.

import type { Tag, TagProducer } from '../tag_producer';
import type { SinkSnapshot } from './stats_sink';

export type StatsdType = 'c' | 'g' | 'ms';

/** What every line of a stat starts and ends with: `<prefix>.<name>`, and its tags (or ''). */
export interface StatsdName {
  readonly head: string;
  readonly tail: string;
}

/** Envoy's values are whole numbers (uint64). */
export function statsdLine(name: StatsdName, value: number, type: StatsdType): string {
  return `${name.head}:${Math.round(value)}|${type}${name.tail}`;
}

/** DogStatsD's tags: `|#proxy.cluster_name:a,proxy.response_code:200`; '' without tags. */
export function tagSuffix(tags: readonly Tag[]): string {
  return tags.length === 0 ? '' : `|#${tags.map((tag) => `${tag.name}:${tag.value}`).join(',')}`;
}

/** Each stat's StatsdName, worked out once per slot (a slot never names another stat). */
export class StatsdNames {
  private readonly bySlot: Array<StatsdName | undefined> = [];

  /** @param tags the tag extraction of a DogStatsD sink; null for full names without tags */
  constructor(
    private readonly prefix: string,
    private readonly tags: TagProducer | null,
  ) {}

  /** The StatsdName of the stat `name` in slot `id` (-1: it has none, and is named afresh). */
  of(id: number, name: string): StatsdName {
    const known = id >= 0 ? this.bySlot[id] : undefined;
    if (known !== undefined) return known;
    const made = this.make(name);
    if (id >= 0) this.bySlot[id] = made;
    return made;
  }

  private make(name: string): StatsdName {
    if (this.tags === null) return { head: `${this.prefix}.${name}`, tail: '' };
    const tagged = this.tags.produceTags(name);
    return { head: `${this.prefix}.${tagged.name}`, tail: tagSuffix(tagged.tags) };
  }
}

/**
 * The lines of one flush in Envoy's order: the counters written to since they were created, then
 * such gauges, then a timer line per histogram sample of the interval.
 */
export function forEachStatsdLine(snapshot: SinkSnapshot, names: StatsdNames, visit: (line: string, type: StatsdType) => void): void {
  const { scalars, counterDeltas } = snapshot;
  for (const counters of [true, false]) {
    for (let i = 0; i < scalars.length; i++) {
      if (scalars.isCounter(i) !== counters || !scalars.used(i)) continue;
      const name = names.of(scalars.id(i), scalars.name(i));
      visit(counters ? statsdLine(name, counterDeltas[i]!, 'c') : statsdLine(name, scalars.value(i), 'g'), counters ? 'c' : 'g');
    }
  }
  for (const histogram of snapshot.histograms) {
    if (histogram.interval === null) continue;
    const name = names.of(histogram.id ?? -1, histogram.name);
    histogram.interval.forEachSample((value, count) => {
      const line = statsdLine(name, value, 'ms');
      for (let n = 0; n < count; n++) visit(line, 'ms');
    });
  }
}
