// /stats and /stats/prometheus: which form a query gets, the usage 404, the filter's 400, and
// the wait for every stat name to be declared.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AdminHandler, AdminRequest, AdminResponse } from '../../src/admin/admin_server';
import { statsHandlers } from '../../src/admin/stats_handler';
import { parseQuery } from '../../src/admin/query';
import { HistogramBucketSettings } from '../../src/admin/stats/histogram_bucket_settings';
import { PrometheusFormatter } from '../../src/admin/stats/prometheus';
import type { StatsSnapshot } from '../../src/stats/sample';
import { TagExtractor } from '../../src/admin/stats/tag_extractor';
import { counter, gauge, scalarList } from '../helpers/histogram_samples';

const SNAPSHOT: StatsSnapshot = { scalars: scalarList([counter('cluster.a.upstream_rq_total', 2), gauge('server.live', 1)]), histograms: [] };

function handlers(declared: () => Promise<void> = () => Promise.resolve()): Map<string, AdminHandler> {
  const prometheus = new PrometheusFormatter(
    new TagExtractor({ statsTags: [], useAllDefaultTags: true, histogramBucketSettings: [] }),
    new HistogramBucketSettings([]),
  );
  // A snapshot that takes a step, as the supervisor's does while it sorts new names.
  const snapshot = function* () {
    yield;
    return SNAPSHOT;
  };
  return new Map(statsHandlers(snapshot, prometheus, declared).map((h) => [h.path, h]));
}

async function get(path: string, query = '', declared?: () => Promise<void>): Promise<AdminResponse & { text: string }> {
  const handler = handlers(declared).get(path)!;
  const req: AdminRequest = { method: 'GET', path, query: parseQuery(query, handler.decodeQuery), headers: {}, body: Buffer.alloc(0), role: null };
  const res = await handler.handle(req);
  const chunks = typeof res.body === 'string' ? [res.body] : [...res.body];
  return { ...res, text: Buffer.concat(chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : c))).toString() };
}

test('the two paths, their help, neither mutating', () => {
  assert.deepEqual(
    [...handlers().values()].map((h) => [h.path, h.help, h.mutatesState]),
    [
      ['/stats', 'print server stats', false],
      ['/stats/prometheus', 'print server stats in prometheus format', false],
    ],
  );
});

test('no format is text, json is JSON, prometheus is the same as /stats/prometheus', async () => {
  assert.equal((await get('/stats')).text, 'cluster.a.upstream_rq_total: 2\nserver.live: 1\n');
  const json = await get('/stats', 'format=json&usedonly');
  assert.equal(json.contentType, 'application/json');
  assert.equal(json.text, '{"stats":[{"name":"cluster.a.upstream_rq_total","value":2},{"name":"server.live","value":1}]}');
  const prometheus = await get('/stats', 'format=prometheus&filter=live');
  assert.equal(prometheus.text, '# TYPE proxy_server_live gauge\nproxy_server_live{} 1\n\n');
  assert.equal((await get('/stats/prometheus', 'filter=live')).text, prometheus.text);
  assert.equal((await get('/stats/prometheus', 'filter=cluster%5C.a')).text, '# TYPE proxy_cluster_upstream_rq_total counter\nproxy_cluster_upstream_rq_total{proxy_cluster_name="a"} 2\n\n');
});

test('any other format is 404 with the usage line', async () => {
  const res = await get('/stats', 'format=xml');
  assert.equal(res.status, 404);
  assert.equal(res.text, 'usage: /stats?format=json  or /stats?format=prometheus \n\n');
});

test('an invalid filter is 400 on either path', async () => {
  for (const path of ['/stats', '/stats/prometheus']) {
    const res = await get(path, 'filter=(');
    assert.equal(res.status, 400);
    assert.match(res.text, /^Invalid regex: /);
  }
});

test('every form waits until the stat names are declared; a bad filter does not', async () => {
  for (const [path, query] of [['/stats', ''], ['/stats', 'format=json'], ['/stats/prometheus', '']] as const) {
    let declare: () => void = () => undefined;
    const declared = new Promise<void>((resolve) => (declare = resolve));
    let answered = false;
    const response = get(path, query, () => declared).then((res) => {
      answered = true;
      return res;
    });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(answered, false, `${path}?${query}`);
    declare();
    assert.equal((await response).status, 200);
    assert.equal((await get(path, 'filter=(', () => new Promise(() => undefined))).status, 400);
  }
});
