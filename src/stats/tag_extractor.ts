// Each stat's name as Prometheus shows it: the tag-extracted name, prefixed `proxy_` and
// sanitized, and its tags as label text. Extraction runs regexes, and /stats/prometheus asks
// for every name (400,000 with 10,000 clusters), so results are kept: a stat's name never
// changes meaning, and the names are those of the stats region, whose capacity bounds the map.
// One per supervisor (its configuration's tags); no module state.

import type { StatsConfig } from '../config/model';
import { Tag, TagProducer } from './tag_producer';

export interface PrometheusName {
  /** `proxy_cluster_upstream_rq` */
  readonly name: string;
  /** `proxy_response_code="200",proxy_cluster_name="foo"`, or '' without tags. */
  readonly labels: string;
}

const PREFIX = 'proxy_';

/** Metric and label names are `[a-zA-Z_][a-zA-Z0-9_]*`: anything else becomes `_`. */
export function sanitizeName(name: string): string {
  const sanitized = name.replace(/[^a-zA-Z0-9_]/g, '_');
  return /^[0-9]/.test(sanitized) ? `_${sanitized}` : sanitized;
}

/** A label value is free text, but the exposition format needs `\`, `"` and newline escaped. */
function escapeLabelValue(value: string): string {
  return value.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`));
}

/** Memoizes a string function over the few distinct inputs it sees (metric and tag names). */
function memo(f: (s: string) => string): (s: string) => string {
  const known = new Map<string, string>();
  return (s) => {
    let out = known.get(s);
    if (out === undefined) {
      out = f(s);
      known.set(s, out);
    }
    return out;
  };
}

/** The label text of a list of tags, and its continuations by one more tag (name, then value). */
interface LabelNode {
  readonly text: string;
  next: Map<string, Map<string, LabelNode>> | null;
}

export class TagExtractor {
  private readonly producer: TagProducer;
  private readonly names = new Map<string, PrometheusName>();
  /** By stat slot, for the region's stats (see ScalarSample.id). */
  private readonly byId: PrometheusName[] = [];
  // A few hundred distinct metric names and a few tag names: sanitized once each.
  private readonly metricName = memo((extracted) => sanitizeName(PREFIX + extracted));
  private readonly labelName = memo(sanitizeName);
  /**
   * Label texts by their tags: a cluster's 40 stats share one string, built once, and a lookup
   * hashes short tag values rather than a freshly built text.
   */
  private readonly labelRoot: LabelNode = { text: '', next: null };

  constructor(config: StatsConfig) {
    this.producer = new TagProducer(config);
  }

  /**
   * A stat with an `id` (its slot) is looked up in an array instead of hashing its name, and its
   * name is read only the first time.
   */
  prometheusName(stat: { readonly name: string; readonly id?: number }): PrometheusName {
    const id = stat.id;
    let known = id === undefined ? this.names.get(stat.name) : this.byId[id];
    if (known === undefined) {
      const statName = stat.name;
      const tagged = this.producer.produceTags(statName);
      known = { name: this.metricName(tagged.name), labels: this.labels(tagged.tags) };
      if (id === undefined) this.names.set(statName, known);
      else this.byId[id] = known;
    }
    return known;
  }

  private labels(tags: readonly Tag[]): string {
    let node = this.labelRoot;
    for (const tag of tags) {
      node.next ??= new Map();
      let byValue = node.next.get(tag.name);
      if (byValue === undefined) {
        byValue = new Map();
        node.next.set(tag.name, byValue);
      }
      let child = byValue.get(tag.value);
      if (child === undefined) {
        const label = `${this.labelName(tag.name)}="${escapeLabelValue(tag.value)}"`;
        child = { text: node.text === '' ? label : `${node.text},${label}`, next: null };
        byValue.set(tag.value, child);
      }
      node = child;
    }
    return node.text;
  }
}
