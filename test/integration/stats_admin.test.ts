// The stats endpoints on the real binary with two workers: /reset_counters under load loses no
// increment made after it, a histogram fed a known distribution by two writer processes reports
// its quantiles within 1% in text and JSON, and the three forms agree on every counter.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { TagExtractor } from '../../src/admin/stats/tag_extractor';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import { RunningProxy, startProxy, waitFor } from '../helpers/proxy_process';

const run = promisify(execFile);

/** One keep-alive GET through the proxy; resolves when the response is complete. */
function get(agent: http.Agent, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`))));
      })
      .on('error', reject);
  });
}

describe('stats endpoints with two workers', { timeout: 90_000 }, () => {
  let upstream: http.Server;
  let proxy: RunningProxy;
  let port: number;

  before(async () => {
    upstream = http.createServer((_req, res) => res.end('ok'));
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const upstreamPort = (upstream.address() as AddressInfo).port;
    proxy = await startProxy(
      {
        stats_flush_interval: '0.1s',
        static_resources: {
          listeners: [httpListener('http_in', 0, [{ match: { prefix: '/' }, route: { cluster: 'web' } }])],
          clusters: [localCluster('web', upstreamPort)],
        },
      },
      ['--concurrency', '2'],
    );
    port = await proxy.listenerPort('http_in');
  });

  after(async () => {
    await proxy?.cleanup();
    upstream?.close();
  });

  test('/reset_counters under load: counters restart from 0 and count every request after it', async () => {
    const concurrency = 8;
    const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
    // A request started once the reset's answer arrived is surely after it; one started after the
    // reset was sent may fall on either side, as may those in flight then.
    let phase: 'before' | 'resetting' | 'after' = 'before';
    let startedAfterReset = 0;
    let startedSinceResetSent = 0;
    let stop = false;
    const loops = Array.from({ length: concurrency }, async () => {
      while (!stop) {
        const started = phase;
        await get(agent, port);
        if (started === 'after') startedAfterReset++;
        if (started !== 'before') startedSinceResetSent++;
      }
    });
    try {
      await waitForCount(proxy, 'http.ingress_http.downstream_rq_total', 300);
      phase = 'resetting';
      const reset = await proxy.admin('/reset_counters', 'POST');
      assert.deepEqual([reset.status, reset.body], [200, 'OK\n']);
      phase = 'after';
      await waitUntil(() => startedAfterReset >= 500);
      stop = true;
      await Promise.all(loops);
    } finally {
      stop = true;
      agent.destroy();
    }
    // Not one request begun after the reset is missing; nothing from well before it remains.
    for (const name of ['http.ingress_http.downstream_rq_total', 'cluster.web.upstream_rq_total']) {
      const value = (await proxy.stat(name))!;
      assert.ok(
        value >= startedAfterReset && value <= startedSinceResetSent + concurrency,
        `${name} = ${value}: ${startedAfterReset} requests begun after the reset, ${startedSinceResetSent} since it was sent`,
      );
    }
    // Gauges are not counters: untouched.
    assert.equal(await proxy.stat('server.concurrency'), 2);
    // Mutation over GET still works (with a warning in the log), as the spec keeps it for now.
    assert.deepEqual(await proxy.admin('/reset_counters').then((r) => [r.status, r.body]), [200, 'OK\n']);
    assert.equal(await proxy.stat('cluster.web.upstream_rq_total'), 0);
  });

  test('a histogram fed 1..10000 by two writer processes: quantiles within 1% in text and JSON', async () => {
    const feeder = path.join(__dirname, '..', 'helpers', 'histogram_feeder.js');
    // startProxy runs with --disable-hot-restart: the supervisor's private region.
    const region = `/proxy_private_stats_${proxy.pid}`;
    const name = 'test.known_distribution';
    await Promise.all([
      run(process.execPath, [feeder, region, name, '1', '2', '10000'], { timeout: 30_000 }),
      run(process.execPath, [feeder, region, name, '2', '2', '10000'], { timeout: 30_000 }),
    ]);
    // The k-th smallest of 1..10000 is k: quantile q is ceil(q * 10000), at least 1.
    const exact = (q: number) => Math.max(1, Math.ceil(q * 10_000));
    const within = (got: number, q: number) => assert.ok(Math.abs(got - exact(q)) <= exact(q) * 0.01, `P${q * 100}: ${got}, exact ${exact(q)}`);

    // Once a flush has merged all 10,000 samples (cumulative data only grows)...
    await waitFor('a flush with every sample', async () => {
      const body = (await proxy.admin(`/stats/prometheus?filter=^${name.replace('.', '\\.')}$`)).body;
      return body.includes('proxy_test_known_distribution_count{} 10000\n') ? true : undefined;
    });
    // ...text shows `name: P0(i,c) P25(i,c) ...`.
    const line = (await proxy.admin(`/stats?filter=^${name.replace('.', '\\.')}$`)).body.trim();
    const text = [...line.matchAll(/P([\d.]+)\(([^,]+),([^)]+)\)/g)].map((m) => [m[1]!, Number(m[3])] as const);
    assert.deepEqual(text.map(([label]) => label), ['0', '25', '50', '75', '90', '99', '99.9', '100']);
    for (const [label, cumulative] of text) within(cumulative, Number(label) / 100);

    const json = JSON.parse((await proxy.admin(`/stats?format=json&filter=${name}`)).body) as {
      stats: { histograms: { supported_quantiles: number[]; computed_quantiles: { name: string; values: { cumulative: number }[] }[] } }[];
    };
    const { supported_quantiles, computed_quantiles } = json.stats[0]!.histograms;
    assert.deepEqual(supported_quantiles, [0, 25, 50, 75, 90, 95, 99, 99.9, 100]);
    assert.equal(computed_quantiles[0]!.name, name);
    computed_quantiles[0]!.values.forEach((v, i) => within(v.cumulative, supported_quantiles[i]! / 100));
  });

  test('text, JSON and Prometheus agree on every counter', async () => {
    await get(new http.Agent(), port);
    const tags = new TagExtractor({ statsTags: [], useAllDefaultTags: true, histogramBucketSettings: [] });
    const outsideAdmin = (json: string) =>
      new Map(
        (JSON.parse(json) as { stats: { name?: string; value?: number }[] }).stats
          .filter((s) => s.name !== undefined && !s.name.includes('.admin.'))
          .map((s) => [s.name!, s.value!]),
      );
    // Admin's own counters move with each request, and a closing connection still moves a few
    // others: read the three forms between two equal JSON readings, so that nothing moved.
    const forms = await waitFor('the stats to stand still', async () => {
      const read = async (path: string) => (await proxy.admin(path)).body;
      const before = await read('/stats?format=json');
      const text = await read('/stats');
      const json = await read('/stats?format=json');
      const prometheus = await read('/stats/prometheus');
      const after = await read('/stats?format=json');
      const counters = new Set(prometheus.split('\n').filter((l) => l.endsWith(' counter')).map((l) => l.split(' ')[2]));
      const isCounter = (name: string) => counters.has(tags.prometheusName(name).name);
      const first = outsideAdmin(before);
      const last = outsideAdmin(after);
      // Gauges such as server.uptime move on their own; counters stand still without traffic.
      const still = [...first].every(([name, value]) => !isCounter(name) || last.get(name) === value);
      return still ? { text, json: new Map([...outsideAdmin(json)].filter(([name]) => isCounter(name))), prometheus } : undefined;
    });
    const fromText = new Map(forms.text.split('\n').filter((l) => / \d+$/.test(l)).map((l) => [l.slice(0, l.lastIndexOf(': ')), Number(l.slice(l.lastIndexOf(' ') + 1))]));
    const promLines = new Map(forms.prometheus.split('\n').filter((l) => l && !l.startsWith('#')).map((l) => [l.slice(0, l.lastIndexOf(' ')), Number(l.slice(l.lastIndexOf(' ') + 1))]));
    let compared = 0;
    for (const [name, value] of forms.json) {
      const { name: metric, labels } = tags.prometheusName(name);
      assert.equal(fromText.get(name), value, `text ${name}`);
      assert.equal(promLines.get(`${metric}{${labels}}`), value, `prometheus ${name}`);
      compared++;
    }
    assert.ok(compared > 100, `${compared} counters compared`);
    assert.ok((forms.json.get('cluster.web.upstream_rq_total') ?? 0) > 0);
  });
});

async function waitForCount(proxy: RunningProxy, name: string, atLeast: number): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (((await proxy.stat(name)) ?? 0) >= atLeast) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${name} never reached ${atLeast}`);
}

async function waitUntil(done: () => boolean): Promise<void> {
  for (let i = 0; i < 600 && !done(); i++) await new Promise((r) => setTimeout(r, 50));
  if (!done()) throw new Error('the load did not make progress');
}
