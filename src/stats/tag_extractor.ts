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

function labelText(tags: readonly Tag[]): string {
  return tags.map((t) => `${sanitizeName(t.name)}="${escapeLabelValue(t.value)}"`).join(',');
}

export class TagExtractor {
  private readonly producer: TagProducer;
  private readonly names = new Map<string, PrometheusName>();
  /** One string per distinct metric name and label text (a cluster's 40 stats share one). */
  private readonly interned = new Map<string, string>();

  constructor(config: StatsConfig) {
    this.producer = new TagProducer(config);
  }

  prometheusName(statName: string): PrometheusName {
    let known = this.names.get(statName);
    if (known === undefined) {
      const tagged = this.producer.produceTags(statName);
      known = { name: this.intern(sanitizeName(PREFIX + tagged.name)), labels: this.intern(labelText(tagged.tags)) };
      this.names.set(statName, known);
    }
    return known;
  }

  private intern(text: string): string {
    const known = this.interned.get(text);
    if (known !== undefined) return known;
    this.interned.set(text, text);
    return text;
  }
}
