// The Zipkin reporter's batching, against a collector on 127.0.0.1 behind a real cluster: spans
// wait until min_flush_spans of them are buffered or the flush interval passes (a manual clock
// moves it), go out as one Zipkin v2 JSON POST, and are counted; the buffer holds as many as
// min_flush_spans said when the reporter was made; a collector cluster that is gone fails the
// report; close() stops the timer.

import assert from 'node:assert/strict';
import * as http from 'node:http';
import { describe, test, type TestContext } from 'node:test';
import { SystemClock } from '../../src/common/clock';
import type { ZipkinTracerConfig } from '../../src/config/model';
import { LiveRuntime } from '../../src/runtime/live_runtime';
import { createHeapStatsStore, type SharedStatsStore } from '../../src/stats/store';
import { ZipkinReporter } from '../../src/tracing/zipkin/zipkin_reporter';
import { ZipkinSpan } from '../../src/tracing/zipkin/zipkin_span';
import { ZipkinStats } from '../../src/tracing/zipkin/zipkin_stats';
import { AsyncClient } from '../../src/upstream/worker/async_client';
import { ClusterManager } from '../../src/upstream/worker/cluster_manager';
import { silentLogger, staticCluster } from '../helpers/data_plane';
import { closeServer, listen } from '../helpers/http_peers';
import { ManualClock } from '../helpers/manual_clock';
import { staticSnapshots } from '../helpers/membership';
import { waitFor } from '../helpers/proxy_process';

const CONFIG: ZipkinTracerConfig = {
  kind: 'zipkin',
  name: 'proxy.tracers.zipkin',
  collectorCluster: 'zipkin',
  collectorEndpoint: '/api/v2/spans',
  collectorHostname: 'zipkin.example',
  traceId128Bit: false,
  sharedSpanContext: false,
};

interface Setup {
  readonly reporter: ZipkinReporter;
  readonly clock: ManualClock;
  readonly runtime: LiveRuntime;
  readonly store: SharedStatsStore;
  /** The spans of each report the collector got, by report. */
  readonly reports: string[][];
  readonly clusters: ClusterManager;
}

async function setup(t: TestContext, runtimeValues: [string, string][]): Promise<Setup> {
  const reports: string[][] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      reports.push((JSON.parse(Buffer.concat(chunks).toString()) as { name: string }[]).map((span) => span.name));
      res.statusCode = 202;
      res.end();
    });
  });
  const port = await listen(server);
  const store = createHeapStatsStore();
  const runtime = new LiveRuntime(runtimeValues);
  const configs = [staticCluster('zipkin', [{ port }])];
  const clusters = new ClusterManager({ configs, snapshots: staticSnapshots(configs, store.hosts), store, runtime, log: () => silentLogger });
  const clock = new ManualClock();
  const context = {
    clusters,
    asyncClient: new AsyncClient({ clock: new SystemClock(), localAddress: undefined }),
    clock,
    runtime,
    random: () => 0,
    stats: store,
    node: { id: 'n', cluster: 'edge', locality: { region: '', zone: '', subZone: '' } },
    localAddress: '127.0.0.1',
  };
  const reporter = new ZipkinReporter(CONFIG, context, new ZipkinStats(store));
  t.after(async () => {
    reporter.close();
    clusters.close();
    await closeServer(server);
  });
  return { reporter, clock, runtime, store, reports, clusters };
}

function span(name: string): ZipkinSpan {
  return new ZipkinSpan({ traceIdHigh: null, traceId: '1111111111111111', spanId: '2222222222222222', parentId: null, sampled: true }, 'SERVER', 0, name, () => undefined);
}

const stat = (store: SharedStatsStore, name: string): number => store.snapshot().get(`tracing.zipkin.${name}`) ?? 0;

describe('the Zipkin reporter', { timeout: 30_000 }, () => {
  test('min_flush_spans spans go at once; fewer wait for the flush interval', async (t) => {
    const { reporter, clock, store, reports } = await setup(t, [['tracing.zipkin.min_flush_spans', '3']]);
    for (const name of ['a', 'b', 'c']) reporter.report(span(name));
    assert.equal(stat(store, 'spans_sent'), 3);
    await waitFor('the first report', () => (reports.length === 1 ? true : undefined));
    assert.deepEqual(reports[0], ['a', 'b', 'c']);
    await waitFor('its answer counted', () => (stat(store, 'reports_sent') === 1 ? true : undefined));

    reporter.report(span('d'));
    clock.advance(4999);
    assert.equal(stat(store, 'spans_sent'), 3);
    clock.advance(1);
    assert.equal(stat(store, 'timer_flushed'), 1);
    assert.equal(stat(store, 'spans_sent'), 4);
    await waitFor('the timer report', () => (reports.length === 2 ? true : undefined));
    assert.deepEqual(reports[1], ['d']);
    // The timer runs on, with or without spans.
    clock.advance(5000);
    assert.equal(stat(store, 'timer_flushed'), 2);
    assert.equal(reports.length, 2);
  });

  test('the buffer holds what min_flush_spans said at the start; the interval follows the runtime', async (t) => {
    const { reporter, clock, runtime, store, reports } = await setup(t, [['tracing.zipkin.min_flush_spans', '2']]);
    runtime.replace([['tracing.zipkin.min_flush_spans', '10'], ['tracing.zipkin.flush_interval_ms', '100']]);
    for (const name of ['a', 'b', 'c']) reporter.report(span(name));
    // Two fit; the third is dropped, and ten are never reached.
    assert.equal(stat(store, 'spans_sent'), 0);
    // The interval read when the timer was armed (5 s) first, then the runtime's.
    clock.advance(5000);
    clock.advance(100);
    assert.equal(stat(store, 'timer_flushed'), 2);
    await waitFor('the report', () => (reports.length === 1 ? true : undefined));
    assert.deepEqual(reports[0], ['a', 'b']);
    assert.equal(stat(store, 'spans_sent'), 2);
  });

  test('a collector cluster that is gone fails the report; close() stops the timer', async (t) => {
    const { reporter, clock, store, clusters } = await setup(t, [['tracing.zipkin.min_flush_spans', '1']]);
    clusters.remove('zipkin');
    reporter.report(span('lost'));
    assert.equal(stat(store, 'spans_sent'), 1);
    assert.equal(stat(store, 'reports_failed'), 1);
    reporter.close();
    clock.advance(60_000);
    assert.equal(stat(store, 'timer_flushed'), 0);
  });
});
