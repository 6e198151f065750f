// /stats/recentlookups (Envoy 1.16's): off by default with only the total counting, the names a
// worker looked up by string once enabled, cleared, disabled again, and server.stats_recent_lookups
// following the total of every process.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import { startUpstream, Upstream } from '../helpers/http_peers';
import { request, RunningProxy, startProxy, waitFor } from '../helpers/proxy_process';

const NOT_ENABLED = /^Lookup tracking is not enabled\. Use \/stats\/recentlookups\/enable to enable\.\n\ntotal: (\d+)\n$/;
const TABLE = /^ {3}Count Lookup\n((?: *\d+ \S+\n)*)\ntotal: (\d+)\n$/;

interface Table {
  readonly rows: readonly (readonly [number, string])[];
  readonly total: number;
}

function table(body: string): Table {
  const m = TABLE.exec(body);
  assert.ok(m, body);
  const rows = m[1]!
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      assert.equal(line.indexOf(' ', 8), 8, `the count takes 8 columns: ${line}`);
      return [Number(line.slice(0, 8)), line.slice(9)] as const;
    });
  return { rows, total: Number(m[2]) };
}

describe('/stats/recentlookups', { timeout: 60_000 }, () => {
  let upstream: Upstream;
  let proxy: RunningProxy;
  let port: number;

  before(async () => {
    upstream = await startUpstream('backend');
    const routes = [
      { match: { prefix: '/other' }, route: { cluster: 'other' } },
      { match: { prefix: '/' }, route: { cluster: 'backend' } },
    ];
    proxy = await startProxy({
      // Flushes often, so the test below sees several.
      stats_flush_interval: '0.1s',
      static_resources: { listeners: [httpListener('http_in', 0, routes)], clusters: [localCluster('backend', upstream.port), localCluster('other', upstream.port)] },
    });
    port = await proxy.listenerPort('http_in');
  });

  after(async () => {
    await proxy?.cleanup();
    await upstream?.close();
  });

  const get = async () => {
    const r = await proxy.admin('/stats/recentlookups');
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /^text\/plain/);
    return r.body;
  };
  const post = async (path: string) => assert.deepEqual(await proxy.admin(path, 'POST').then((r) => [r.status, r.body]), [200, 'OK\n']);
  const lookupsGauge = async () => (await proxy.stat('server.stats_recent_lookups'))!;

  test('disabled by default: no names, but the lookups made while starting are counted', async () => {
    const m = NOT_ENABLED.exec(await get());
    assert.ok(m);
    assert.ok(Number(m[1]) > 100, `total ${m[1]}`);
    assert.ok((await lookupsGauge()) > 100);
  });

  test('enabled: the names a worker looks up by string, least looked up first; clear; disable', async () => {
    await post('/stats/recentlookups/enable');
    assert.deepEqual(table(await get()).rows, []);
    for (let i = 0; i < 3; i++) assert.equal((await request(`http://127.0.0.1:${port}/p${i}`)).status, 200);
    const seen = table(await get());
    // The worker makes the cluster's stat handles on its first request (and the code's counter
    // on its first 200): one lookup each, however many requests follow.
    assert.ok(seen.rows.some(([count, name]) => count === 1 && name === 'cluster.backend.upstream_rq_200'), JSON.stringify(seen.rows));
    assert.ok(seen.rows.some(([count, name]) => count === 1 && name === 'cluster.backend.upstream_rq_completed'));
    const sorted = [...seen.rows].sort(([a, x], [b, y]) => a - b || (x < y ? -1 : x > y ? 1 : 0));
    assert.deepEqual(seen.rows, sorted);
    assert.ok(seen.rows.length <= 200, 'at most 100 names a process');
    assert.ok(seen.total >= seen.rows.reduce((n, [count]) => n + count, 0));

    await post('/stats/recentlookups/clear');
    const cleared = table(await get());
    assert.ok(!cleared.rows.some(([, name]) => name.startsWith('cluster.backend.upstream_rq_')), JSON.stringify(cleared.rows));
    assert.ok(cleared.total < seen.total);
    // The gauge follows every process's total: a first request to the other cluster makes its
    // handles in the worker.
    const before = await lookupsGauge();
    assert.ok(before < seen.total, `${before} after the clear`);
    assert.equal((await request(`http://127.0.0.1:${port}/other`)).status, 200);
    const grown = await lookupsGauge();
    assert.ok(grown >= before + 30, `${before} -> ${grown}`);
    assert.ok(table(await get()).rows.some(([count, name]) => count === 1 && name === 'cluster.other.upstream_rq_200'));

    await post('/stats/recentlookups/disable');
    const m = NOT_ENABLED.exec(await get());
    assert.ok(m);
    assert.ok(Number(m[1]) >= grown);
  });

  test('/reset_counters clears the lookups too', async () => {
    const m = NOT_ENABLED.exec(await get());
    assert.ok(m);
    await post('/reset_counters');
    const after = NOT_ENABLED.exec(await get());
    assert.ok(after);
    assert.ok(Number(after[1]) < Number(m[1]), `${m[1]} -> ${after[1]}`);
  });

  test('stats flushes and /stats renders look nothing up: the circuit breakers of unused priorities are probed, not looked up', async () => {
    await post('/stats/recentlookups/enable');
    await post('/stats/recentlookups/clear');
    const start = table(await get());
    // Each flush (every 0.1 s) and each render probes both priorities of both clusters.
    await new Promise((resolve) => setTimeout(resolve, 600));
    for (let i = 0; i < 3; i++) assert.equal((await proxy.admin('/stats')).status, 200);
    const later = table(await get());
    assert.equal(later.total, start.total, JSON.stringify(later.rows));
    assert.ok(!later.rows.some(([, name]) => name.includes('circuit_breakers')), JSON.stringify(later.rows));
    await post('/stats/recentlookups/disable');
  });

  test('the endpoints are listed, and the commands take POST', async () => {
    const help = (await proxy.admin('/help')).body;
    for (const line of [
      '  /stats/recentlookups: Show recent stat-name lookups',
      '  /stats/recentlookups/clear: clear list of stat-name lookups and counter',
      '  /stats/recentlookups/disable: disable recording of reset stat-name lookup names',
      '  /stats/recentlookups/enable: enable recording of reset stat-name lookup names',
    ]) {
      assert.ok(help.includes(`${line}\n`), `${line} in\n${help}`);
    }
    assert.equal((await proxy.admin('/stats/recentlookups/enable', 'PUT')).status, 405);
    await waitFor('the disabled state kept', async () => (NOT_ENABLED.test(await get()) ? true : undefined));
  });
});
