// The real binary's /stats/prometheus after some traffic: Envoy's tag-extracted names and labels,
// a fixed tag from stats_config, and an exposition that promtool accepts.

import assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import { checkMetrics } from '../helpers/promtool';
import { request, startProxy, waitFor } from '../helpers/proxy_process';

test('promtool accepts /stats/prometheus of a serving proxy', { timeout: 60_000 }, async (t) => {
  const upstream = http.createServer((_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  t.after(() => upstream.close());
  const proxy = await startProxy({
    stats_config: { stats_tags: [{ tag_name: 'deployment', fixed_value: 'test' }] },
    static_resources: {
      listeners: [httpListener('http_in', 0, [{ match: { prefix: '/' }, route: { cluster: 'web' } }])],
      clusters: [localCluster('web', (upstream.address() as AddressInfo).port)],
    },
  });
  t.after(() => proxy.cleanup());

  const port = await proxy.listenerPort('http_in');
  assert.equal((await request(`http://127.0.0.1:${port}/`)).status, 200);
  await waitFor('the request in the stats', async () => ((await proxy.stat('cluster.web.upstream_rq_200')) === 1 ? true : undefined));

  const res = await proxy.admin('/stats/prometheus');
  assert.equal(res.status, 200);
  assert.match(res.headers['content-type'] ?? '', /^text\/plain/);
  const lines = res.body.split('\n');
  assert.ok(lines.includes('# TYPE proxy_cluster_upstream_rq counter'));
  assert.ok(lines.includes('proxy_cluster_upstream_rq{deployment="test",proxy_response_code="200",proxy_cluster_name="web"} 1'), res.body);
  assert.ok(lines.includes('proxy_server_live{deployment="test"} 1'));

  const verdict = await checkMetrics(res.body);
  assert.deepEqual(verdict.problems, []);
  assert.ok(verdict.code === 0 || verdict.code === 3, `promtool exited ${verdict.code}`);
  assert.ok(verdict.lint > 0, 'promtool read the exposition');
});
