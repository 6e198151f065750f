// Times each /stats form on a snapshot of 10,000 clusters (400,000 counters and gauges, 5,000
// histograms): text, JSON, and Prometheus twice (the first run extracts tags, the second finds
// them cached), with the longest stretch between two chunks, which is how long the supervisor's
// event loop waits at worst. Then the same counters and gauges through prom-client, the
// registry the design first named, for the decision in docs/architecture/stats-rendering.md:
// time and memory per scrape.
//
//   node --expose-gc dist/bench/prometheus_exposition.js       (part of `make bench`)
//
// prom-client is not a dependency; to measure it: npm install --no-save prom-client

import type { StatsConfig } from '../src/config/model';
import { HistogramBucketSettings } from '../src/admin/stats/histogram_bucket_settings';
import { PrometheusFormatter } from '../src/admin/stats/prometheus';
import { renderStatsJson, renderStatsText, StatsQuery } from '../src/admin/stats/render';
import type { StatsSnapshot } from '../src/stats/sample';
import { sanitizeName, TagExtractor } from '../src/admin/stats/tag_extractor';
import { TagProducer } from '../src/stats/tag_producer';
import { STATS_PER_CLUSTER, syntheticSnapshot } from './synthetic_stats';

const CLUSTERS = 10_000;
const CLUSTERS_WITH_HISTOGRAMS = 2_500;
const CONFIG: StatsConfig = { statsTags: [], useAllDefaultTags: true, histogramBucketSettings: [] };
const ALL: StatsQuery = { usedOnly: false, filter: null };

/** The part of prom-client's API this bench uses (it is not installed with the project). */
interface PromMetric {
  reset(): void;
  set(labels: Record<string, string>, value: number): void;
}
interface PromClient {
  Registry: new () => { metrics(): Promise<string> };
  Gauge: new (options: { name: string; help: string; labelNames: string[]; registers: unknown[] }) => PromMetric;
}

function loadPromClient(): PromClient | null {
  try {
    return require('prom-client') as PromClient;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND') return null;
    throw e;
  }
}

/** Heap in use after a full collection (with --expose-gc), else as it is. */
function heapMiB(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed / 2 ** 20;
}

interface Run {
  readonly ms: number;
  readonly mib: number;
  readonly chunks: number;
  readonly longestStepMs: number;
}

/** Pulls every chunk, as the admin server does, timing the whole and the longest step. */
function consume(chunks: Iterable<Uint8Array>): Run {
  const start = performance.now();
  let last = start;
  let longest = 0;
  let bytes = 0;
  let count = 0;
  for (const chunk of chunks) {
    bytes += chunk.length;
    count++;
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }
  return { ms: performance.now() - start, mib: bytes / 2 ** 20, chunks: count, longestStepMs: longest };
}

function report(what: string, run: Run): void {
  const cells = [what.padEnd(24), `${run.ms.toFixed(0).padStart(6)} ms`, `${run.mib.toFixed(1).padStart(6)} MiB`];
  cells.push(`${String(run.chunks).padStart(5)} chunks`, `longest step ${run.longestStepMs.toFixed(1)} ms`);
  console.log(cells.join('  '));
}

async function promClient(client: PromClient, snapshot: StatsSnapshot): Promise<void> {
  // Tags as prom-client wants them (label objects per stat), computed outside its timings.
  const producer = new TagProducer(CONFIG);
  const scalars = snapshot.scalars;
  const stats = Array.from({ length: scalars.length }, (_, i) => {
    const tagged = producer.produceTags(scalars.name(i));
    const labels = Object.fromEntries(tagged.tags.map((t) => [sanitizeName(t.name), t.value]));
    return { metric: sanitizeName(`proxy_${tagged.name}`), labels, value: scalars.value(i) };
  });
  const before = heapMiB();
  const setupStart = performance.now();
  const registry = new client.Registry();
  const metrics = new Map<string, PromMetric>();
  for (const s of stats) {
    if (!metrics.has(s.metric)) {
      // Gauges for all: a Counter only increments, and the values are totals already.
      const labelNames = Object.keys(s.labels);
      metrics.set(s.metric, new client.Gauge({ name: s.metric, help: s.metric, labelNames, registers: [registry] }));
    }
  }
  const setupMs = performance.now() - setupStart;
  for (const run of ['first', 'second']) {
    const stalls = new Stalls();
    const start = performance.now();
    for (const metric of metrics.values()) metric.reset();
    for (const s of stats) metrics.get(s.metric)!.set(s.labels, s.value);
    const text = await registry.metrics();
    const ms = performance.now() - start;
    const cells = [`prom-client, ${run}`.padEnd(24), `${ms.toFixed(0).padStart(6)} ms`, `${(text.length / 2 ** 20).toFixed(1).padStart(6)} MiB`];
    console.log([...cells, `longest step ${(await stalls.longest()).toFixed(1)} ms`].join('  '));
  }
  const held = heapMiB() - before;
  // stats is used after the measurement, so that its share of the heap is in `before` alone.
  const series = `${metrics.size} metrics, ${stats.length} series registered in ${setupMs.toFixed(0)} ms`;
  console.log(`prom-client: ${series}; heap held ${held.toFixed(0)} MiB`);
  console.log('prom-client cannot load pre-aggregated histogram buckets (only observe()): histograms left out');
}

/** The longest the event loop went without a turn, from construction to longest(). */
class Stalls {
  private last = performance.now();
  private max = 0;
  private readonly timer = setInterval(() => this.tick(), 1);

  private tick(): void {
    const now = performance.now();
    this.max = Math.max(this.max, now - this.last);
    this.last = now;
  }

  async longest(): Promise<number> {
    await new Promise((resolve) => setImmediate(resolve));
    this.tick();
    clearInterval(this.timer);
    return this.max;
  }
}

async function main(): Promise<void> {
  const snapshot = syntheticSnapshot(CLUSTERS, CLUSTERS_WITH_HISTOGRAMS);
  console.log(
    `${snapshot.scalars.length} counters and gauges (${CLUSTERS} clusters x ${STATS_PER_CLUSTER}, and server stats), ` +
      `${snapshot.histograms.length} histograms`,
  );
  report('text', consume(renderStatsText(snapshot, ALL)));
  report('json', consume(renderStatsJson(snapshot, ALL)));
  const before = heapMiB();
  const extractor = new TagExtractor(CONFIG);
  const prometheus = new PrometheusFormatter(extractor, new HistogramBucketSettings([]));
  report('prometheus, first', consume(prometheus.render(snapshot, ALL)));
  report('prometheus, second', consume(prometheus.render(snapshot, ALL)));
  const held = heapMiB() - before;
  // Used after the measurement, so that the cache is alive while measured.
  extractor.prometheusName('server.live');
  console.log(`tag extraction cache: heap held ${held.toFixed(0)} MiB`);
  const client = loadPromClient();
  if (client === null) {
    console.log('prom-client not installed: skipped (npm install --no-save prom-client)');
    return;
  }
  await promClient(client, snapshot);
}

main().catch((e: Error) => {
  process.stderr.write(`prometheus exposition bench failed: ${e.stack ?? e.message}\n`);
  process.exitCode = 1;
});
