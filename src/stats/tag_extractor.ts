// Each stat's name as Prometheus shows it: the tag-extracted name, prefixed `proxy_` and
// sanitized, and its tags as label text. Extraction runs regexes, and /stats/prometheus asks
// for every name (400,000 with 10,000 clusters), so results are kept: a stat's name never
// changes meaning, and the names are those of the stats region, whose capacity bounds the map.
// One per supervisor (its configuration's tags); no module state.

import type { StatsConfig } from '../config/model';
import { CLUSTER_NAME_TAG } from './default_tags';
import type { NameBytes } from './name_bytes';
import { Tag, TagProducer } from './tag_producer';

export interface PrometheusName {
  /** `proxy_cluster_upstream_rq` */
  readonly name: string;
  /** `proxy_response_code="200",proxy_cluster_name="foo"`, or '' without tags. */
  readonly labels: string;
  /** `labels` in UTF-8: what a scrape writes, a copy of bytes rather than an encoding per line. */
  readonly labelBytes: Uint8Array;
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

/**
 * What the rules make of a `cluster.<X><rest>` name, worked out once per `<rest>` with a
 * placeholder for X: the metric name, and the tags with the position of X's cluster_name tag.
 */
interface ClusterShape {
  readonly name: string;
  readonly tags: readonly Tag[];
  readonly clusterTag: number;
  /** Alike for shapes whose tags are alike but for X: with the same X, they have the same labels. */
  readonly labelsKey: string;
}

/** What follows a cluster name, also as bytes, and its shape (null: the rules decide). */
interface KnownRest {
  readonly rest: Uint8Array;
  readonly shape: ClusterShape | null;
}

/**
 * Names as bytes where they lie (the region's), decoded only when the rules must read them: a
 * cluster's stat whose rest came in the cluster before is named without decoding it.
 */
export interface NamedBytes extends NameBytes {
  name(key: number): string;
}

/** One name as NamedBytes (key 0). */
class OneName implements NamedBytes {
  private readonly bytes: Buffer;

  constructor(private readonly text: string) {
    this.bytes = Buffer.from(text);
  }

  name(): string {
    return this.text;
  }

  nameArray(): Uint8Array {
    return this.bytes;
  }

  nameStart(): number {
    return 0;
  }

  nameLength(): number {
    return this.bytes.length;
  }
}

const CLUSTER_PREFIX = 'cluster.';
const CLUSTER_PREFIX_BYTES = Buffer.from(CLUSTER_PREFIX);
const DOT = 0x2e;
const PLACEHOLDERS = ['x', 'y'] as const;
/** Second tokens that the gRPC and TLS rules read as a token of their own (`cluster.grpc.`, `cluster.ssl.`). */
const RULE_WORDS = new Set(['grpc', 'ssl']);

/** The label text of a list of tags, and its continuations by one more tag (name, then value). */
interface LabelNode {
  readonly text: string;
  readonly bytes: Uint8Array;
  next: Map<string, Map<string, LabelNode>> | null;
}

export class TagExtractor {
  private readonly producer: TagProducer;
  private readonly names = new Map<string, PrometheusName>();
  /** By stat slot, for the region's stats (see ScalarList.id). */
  private readonly byId: (PrometheusName | undefined)[] = [];
  // A few hundred distinct metric names and a few tag names: sanitized once each.
  private readonly metricName = memo((extracted) => sanitizeName(PREFIX + extracted));
  private readonly labelName = memo(sanitizeName);
  /**
   * Label texts by their tags: a cluster's 40 stats share one string, built once, and a lookup
   * hashes short tag values rather than a freshly built text.
   */
  private readonly labelRoot: LabelNode = { text: '', bytes: new Uint8Array(0), next: null };
  /** By what follows the cluster name: 10,000 clusters' 940,000 stats have ~100 shapes. */
  private readonly clusterShapes = new Map<string, ClusterShape | null>();
  /**
   * The X of the last cluster-scoped name, also as bytes, and its labels by shape key: names in
   * name order come a cluster at a time, and most of a cluster's stats carry the same labels.
   */
  private lastCluster = '';
  private lastClusterBytes = new Uint8Array(0);
  private readonly lastClusterLabels = new Map<string, LabelNode>();
  private lastLabelsKey = '';
  private lastLabels: LabelNode | undefined;
  /**
   * The rests of the last cluster's names and of the one before, in the order they came: the
   * next cluster's come in the same order, and checking a guess is cheaper than a lookup.
   */
  private currentRests: KnownRest[] = [];
  private previousRests: KnownRest[] = [];

  private readonly decoder = new TextDecoder();

  constructor(config: StatsConfig) {
    this.producer = new TagProducer(config);
  }

  /** A stat with an `id` (its slot, or -1 for none) is looked up in an array instead of hashing its name. */
  prometheusName(statName: string, id = -1): PrometheusName {
    return this.prometheusNameOf(new OneName(statName), 0, id);
  }

  /** prometheusName() of the name of `key` in `list`. */
  prometheusNameOf(list: NamedBytes, key: number, id = -1): PrometheusName {
    let known = id < 0 ? this.names.get(list.name(key)) : this.byId[id];
    if (known === undefined) {
      known = this.clusterScoped(list, key) ?? this.extract(list.name(key));
      if (id < 0) this.names.set(list.name(key), known);
      else {
        // Ids come in name order, not slot order: grown densely, the array stays a fast one.
        while (this.byId.length <= id) this.byId.push(undefined);
        this.byId[id] = known;
      }
    }
    return known;
  }

  private extract(statName: string): PrometheusName {
    const tagged = this.producer.produceTags(statName);
    const labels = this.labels(tagged.tags);
    return { name: this.metricName(tagged.name), labels: labels.text, labelBytes: labels.bytes };
  }

  /**
   * A `cluster.<X>.<rest>` name without running the rules: of the default rules (the only ones
   * a config can select), only cluster_name reads X, a dot-free token, as long as X is not a word
   * another rule anchors on; the others match within `.<rest>` (the gRPC and TLS ones after a
   * later dot, the response code ones in the last token). So the metric name and every other tag
   * are those of the same rest with any X. Null where that does not hold: the slow path decides.
   */
  private clusterScoped(list: NamedBytes, key: number): PrometheusName | null {
    const bytes = list.nameArray(key);
    const start = list.nameStart(key);
    const end = start + list.nameLength(key);
    const after = start + CLUSTER_PREFIX_BYTES.length;
    if (end <= after || !equalBytes(bytes, start, after, CLUSTER_PREFIX_BYTES)) return null;
    let dot = after;
    while (dot < end && bytes[dot] !== DOT) dot++;
    if (dot === after || dot >= end - 1) return null;
    if (!equalBytes(bytes, after, dot, this.lastClusterBytes)) {
      const cluster = this.decoder.decode(bytes.subarray(after, dot));
      if (RULE_WORDS.has(cluster)) return null;
      this.lastCluster = cluster;
      this.lastClusterBytes = bytes.slice(after, dot);
      this.lastClusterLabels.clear();
      this.lastLabels = undefined;
      this.previousRests = this.currentRests;
      this.currentRests = [];
    }
    // Most likely the rest that came at this position in the cluster before.
    let known = this.previousRests[this.currentRests.length];
    if (known === undefined || !equalBytes(bytes, dot, end, known.rest)) {
      const rest = this.decoder.decode(bytes.subarray(dot, end));
      let shape = this.clusterShapes.get(rest);
      if (shape === undefined) {
        shape = this.clusterShape(rest);
        this.clusterShapes.set(rest, shape);
      }
      known = { rest: bytes.slice(dot, end), shape };
    }
    this.currentRests.push(known);
    const shape = known.shape;
    const cluster = this.lastCluster;
    if (shape === null) return null;
    // Consecutive stats mostly share a key: one comparison of the same string spares the hashing.
    let labels = shape.labelsKey === this.lastLabelsKey ? this.lastLabels : this.lastClusterLabels.get(shape.labelsKey);
    if (labels === undefined) {
      const tags = shape.tags.slice();
      tags[shape.clusterTag] = { name: CLUSTER_NAME_TAG, value: cluster };
      labels = this.labels(tags);
      this.lastClusterLabels.set(shape.labelsKey, labels);
    }
    this.lastLabelsKey = shape.labelsKey;
    this.lastLabels = labels;
    return { name: shape.name, labels: labels.text, labelBytes: labels.bytes };
  }

  /**
   * Null unless two placeholders give the same name and the same tags but for the one
   * cluster_name tag carrying each: the cluster name was cut and nothing else read it.
   */
  private clusterShape(rest: string): ClusterShape | null {
    const [a, b] = PLACEHOLDERS.map((p) => this.producer.produceTags(CLUSTER_PREFIX + p + rest));
    if (a!.name !== b!.name || a!.tags.length !== b!.tags.length) return null;
    let clusterTag = -1;
    for (let i = 0; i < a!.tags.length; i++) {
      const [ta, tb] = [a!.tags[i]!, b!.tags[i]!];
      if (ta.name !== tb.name) return null;
      if (ta.value === tb.value) continue;
      if (clusterTag >= 0 || ta.name !== CLUSTER_NAME_TAG || ta.value !== PLACEHOLDERS[0] || tb.value !== PLACEHOLDERS[1]) return null;
      clusterTag = i;
    }
    if (clusterTag < 0) return null;
    // Tag names and values are free text: JSON keeps two different lists from joining alike.
    const labelsKey = JSON.stringify(a!.tags.map((t, i) => (i === clusterTag ? [t.name] : [t.name, t.value])));
    return { name: this.metricName(a!.name), tags: a!.tags, clusterTag, labelsKey };
  }

  private labels(tags: readonly Tag[]): LabelNode {
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
        const text = node.text === '' ? label : `${node.text},${label}`;
        child = { text, bytes: Buffer.from(text), next: null };
        byValue.set(tag.value, child);
      }
      node = child;
    }
    return node;
  }
}

/** Whether `bytes[from, to)` are `expected`. */
function equalBytes(bytes: Uint8Array, from: number, to: number, expected: Uint8Array): boolean {
  if (to - from !== expected.length) return false;
  // From the end: cluster names and rests that differ mostly differ there.
  for (let i = expected.length - 1; i >= 0; i--) if (bytes[from + i] !== expected[i]) return false;
  return true;
}
