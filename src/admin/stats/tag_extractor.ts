// Each stat's name as Prometheus shows it: the tag-extracted name, prefixed `proxy_` and
// sanitized, and its tags as label text. Extraction runs regexes, and /stats/prometheus asks
// for every name (950,000 with 10,000 clusters), so results are kept by slot: a stat's name
// never changes meaning, and the stats region bounds the slots. A slot's result is two array
// cells, a metric index and a shared label text, not an object per stat.
// One per supervisor (its configuration's tags); no module state.

import type { StatsConfig } from '../../config/model';
import { CLUSTER_NAME_TAG } from '../../stats/default_tags';
import type { NameBytes } from '../../stats/name_bytes';
import { Tag, TagProducer } from '../../stats/tag_producer';

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

/** Memoizes a string function over the few distinct inputs it sees (tag names). */
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
  /** The index of its metric name. */
  readonly metric: number;
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
  /** Its place in TagExtractor.labelNodes. */
  readonly index: number;
  readonly text: string;
  readonly bytes: Uint8Array;
  next: Map<string, Map<string, LabelNode>> | null;
}

/** What the rules make of one stat: the index of its metric name, and its labels. */
interface Resolved {
  readonly metric: number;
  readonly node: LabelNode;
}

/** A stat looked up by name (it has no slot), kept whole as prometheusName() hands it out. */
interface NamedStat extends PrometheusName {
  readonly metric: number;
}

export class TagExtractor {
  private readonly producer: TagProducer;
  /** Metric names, sanitized and prefixed, by index; a few hundred. */
  private readonly metricNames: string[] = [];
  private readonly metricIndex = new Map<string, number>();
  /** By extracted name, the index of its metric: names that sanitize alike share one. */
  private readonly metricOfExtracted = new Map<string, number>();
  private readonly byName = new Map<string, NamedStat>();
  /** By stat slot (see ScalarList.id): its metric index + 1 (0: not named yet), and its labels' index. */
  private slotMetric = new Int32Array(0);
  private slotLabels = new Int32Array(0);
  // A few tag names: sanitized once each.
  private readonly labelName = memo(sanitizeName);
  /**
   * Label texts by their tags: a cluster's stats share a few, built once, and a lookup hashes
   * short tag values rather than a freshly built text.
   */
  private readonly labelRoot: LabelNode = { index: 0, text: '', bytes: new Uint8Array(0), next: null };
  /** Every label node, by index. */
  private readonly labelNodes: LabelNode[] = [this.labelRoot];
  /** By what follows the cluster name: 10,000 clusters' 940,000 stats have ~100 shapes. */
  private readonly clusterShapes = new Map<string, ClusterShape | null>();
  /** The cluster shapes of a sorted run's stats by position, by the run's shape (see nameRun). */
  private readonly runShapes = new WeakMap<object, readonly (ClusterShape | null)[]>();
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
   * next cluster's come in the same order, and checking a guess is cheaper than a lookup. The
   * two arrays swap at each cluster, and are written over.
   */
  private currentRests: KnownRest[] = [];
  private currentCount = 0;
  private previousRests: KnownRest[] = [];
  private previousCount = 0;

  private readonly decoder = new TextDecoder();

  constructor(config: StatsConfig) {
    this.producer = new TagProducer(config);
  }

  /** How many metric names there are so far: nameAll() gives indexes below it. */
  get metricCount(): number {
    return this.metricNames.length;
  }

  /** The metric name of an index that nameAll() gave. */
  metricName(metric: number): string {
    return this.metricNames[metric]!;
  }

  /** The Prometheus name of a stat, looked up by its name. */
  prometheusName(statName: string): PrometheusName {
    return this.named(new OneName(statName), 0);
  }

  /**
   * Names the stats of `list` at positions [from, to), whose slots are `ids` (-1: none):
   * `metrics[i]` is the index of one's metric name, and `labels[i]` its label text in UTF-8.
   * A stat with a slot is named once.
   */
  nameAll(list: NamedBytes, ids: Int32Array, from: number, to: number, metrics: Int32Array, labels: Uint8Array[]): void {
    for (let i = from; i < to; i++) {
      const id = ids[i]!;
      if (id < 0) {
        const known = this.named(list, i);
        metrics[i] = known.metric;
        labels[i] = known.labelBytes;
        continue;
      }
      if (id >= this.slotMetric.length) this.growSlots(id);
      if (this.slotMetric[id] === 0) {
        // Most stats are a cluster's: named from its shape, without an object per stat.
        const shape = this.clusterShapeOf(list, i);
        if (shape !== null) this.nameSlot(id, shape.metric, this.clusterLabels(shape));
        else {
          const { metric, node } = this.extract(list.name(i));
          this.nameSlot(id, metric, node);
        }
      }
      metrics[i] = this.slotMetric[id]! - 1;
      labels[i] = this.labelNodes[this.slotLabels[id]!]!.bytes;
    }
  }

  /**
   * Names the stats of a run the name sort found (a RunListener), so that a first scrape finds
   * them named. A cluster's run is named stat by stat the first time its shape comes; a later
   * run of that shape has the same rests at the same positions, so the shapes kept for the first
   * name its stats without reading them again. Other runs are named when a scrape asks.
   */
  nameRun(names: NameBytes, slots: Int32Array, cut: number, shape: object): void {
    const first = slots[0]!;
    const bytes = names.nameArray(first);
    const start = names.nameStart(first);
    // `cluster.<X>.`: the head ends at the dot after X.
    const after = start + CLUSTER_PREFIX_BYTES.length;
    const dot = start + cut - 1;
    if (dot <= after || !equalBytes(bytes, start, after, CLUSTER_PREFIX_BYTES) || !this.enterCluster(bytes, after, dot)) return;
    let shapes = this.runShapes.get(shape);
    if (shapes === undefined) {
      shapes = Array.from(slots, (slot) => this.clusterShapeOf(names, slot));
      this.runShapes.set(shape, shapes);
    }
    for (let k = 0; k < slots.length; k++) {
      const slot = slots[k]!;
      const clusterShape = shapes[k]!;
      if (slot >= this.slotMetric.length) this.growSlots(slot);
      if (clusterShape === null || this.slotMetric[slot] !== 0) continue;
      this.nameSlot(slot, clusterShape.metric, this.clusterLabels(clusterShape));
    }
  }

  private nameSlot(slot: number, metric: number, labels: LabelNode): void {
    this.slotMetric[slot] = metric + 1;
    this.slotLabels[slot] = labels.index;
  }

  /** A stat without a slot, by its name: `key`'s in `list`. */
  private named(list: NamedBytes, key: number): NamedStat {
    const statName = list.name(key);
    let known = this.byName.get(statName);
    if (known === undefined) {
      const shape = this.clusterShapeOf(list, key);
      const { metric, node } = shape === null ? this.extract(statName) : { metric: shape.metric, node: this.clusterLabels(shape) };
      known = { name: this.metricNames[metric]!, labels: node.text, labelBytes: node.bytes, metric };
      this.byName.set(statName, known);
    }
    return known;
  }

  /** Room for slots up to `id`. */
  private growSlots(id: number): void {
    const length = Math.max(id + 1, this.slotMetric.length * 2, 1024);
    const metric = new Int32Array(length);
    metric.set(this.slotMetric);
    this.slotMetric = metric;
    const labels = new Int32Array(length);
    labels.set(this.slotLabels);
    this.slotLabels = labels;
  }

  private extract(statName: string): Resolved {
    const tagged = this.producer.produceTags(statName);
    return { metric: this.metricOf(tagged.name), node: this.labels(tagged.tags) };
  }

  /** The index of an extracted name's metric, prefixed and sanitized. */
  private metricOf(extracted: string): number {
    let metric = this.metricOfExtracted.get(extracted);
    if (metric === undefined) {
      const name = sanitizeName(PREFIX + extracted);
      metric = this.metricIndex.get(name);
      if (metric === undefined) {
        metric = this.metricNames.push(name) - 1;
        this.metricIndex.set(name, metric);
      }
      this.metricOfExtracted.set(extracted, metric);
    }
    return metric;
  }

  /**
   * The shape of a `cluster.<X>.<rest>` name, which names it without running the rules: of the
   * default rules (the only ones a config can select), only cluster_name reads X, a dot-free
   * token, as long as X is not a word another rule anchors on; the others match within `.<rest>`
   * (the gRPC and TLS ones after a later dot, the response code ones in the last token). So the
   * metric name and every other tag are those of the same rest with any X. Null where that does
   * not hold: the slow path decides.
   */
  private clusterShapeOf(list: NameBytes, key: number): ClusterShape | null {
    const bytes = list.nameArray(key);
    const start = list.nameStart(key);
    const end = start + list.nameLength(key);
    const after = start + CLUSTER_PREFIX_BYTES.length;
    if (end <= after || !equalBytes(bytes, start, after, CLUSTER_PREFIX_BYTES)) return null;
    let dot = after;
    while (dot < end && bytes[dot] !== DOT) dot++;
    if (dot === after || dot >= end - 1) return null;
    if (!this.enterCluster(bytes, after, dot)) return null;
    // Most likely the rest that came at this position in the cluster before.
    let known = this.currentCount < this.previousCount ? this.previousRests[this.currentCount] : undefined;
    if (known === undefined || !equalBytes(bytes, dot, end, known.rest)) {
      const rest = this.decoder.decode(bytes.subarray(dot, end));
      let shape = this.clusterShapes.get(rest);
      if (shape === undefined) {
        shape = this.clusterShape(rest);
        this.clusterShapes.set(rest, shape);
      }
      known = { rest: bytes.slice(dot, end), shape };
    }
    this.currentRests[this.currentCount++] = known;
    return known.shape;
  }

  /**
   * Makes `bytes[after, dot)` the cluster whose stats come next, unless it is already; false
   * when it is a word the other rules read (their names take the slow path).
   */
  private enterCluster(bytes: Uint8Array, after: number, dot: number): boolean {
    if (equalBytes(bytes, after, dot, this.lastClusterBytes)) return true;
    const cluster = this.decoder.decode(bytes.subarray(after, dot));
    if (RULE_WORDS.has(cluster)) return false;
    this.lastCluster = cluster;
    this.lastClusterBytes = bytes.slice(after, dot);
    this.lastClusterLabels.clear();
    this.lastLabels = undefined;
    [this.previousRests, this.currentRests] = [this.currentRests, this.previousRests];
    this.previousCount = this.currentCount;
    this.currentCount = 0;
    return true;
  }

  /** The labels of a shape with the X of the name clusterShapeOf() just read. */
  private clusterLabels(shape: ClusterShape): LabelNode {
    // Consecutive stats mostly share a key: one comparison of the same string spares the hashing.
    let labels = shape.labelsKey === this.lastLabelsKey ? this.lastLabels : this.lastClusterLabels.get(shape.labelsKey);
    if (labels === undefined) {
      const tags = shape.tags.slice();
      tags[shape.clusterTag] = { name: CLUSTER_NAME_TAG, value: this.lastCluster };
      labels = this.labels(tags);
      this.lastClusterLabels.set(shape.labelsKey, labels);
    }
    this.lastLabelsKey = shape.labelsKey;
    this.lastLabels = labels;
    return labels;
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
    return { metric: this.metricOf(a!.name), tags: a!.tags, clusterTag, labelsKey };
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
        child = { index: this.labelNodes.length, text, bytes: Buffer.from(text), next: null };
        this.labelNodes.push(child);
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
