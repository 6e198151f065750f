// proxy.filters.http.local_ratelimit through the real binary (one worker: its buckets are the
// worker's), over HTTP/1.1 and h2c alike, each on a listener of its own so that each has its
// buckets: a bucket's tokens spent, then 429 `local_rate_limited` with response_headers_to_add
// and x-proxy-ratelimited; a route's bucket refilled every fill_interval; route entries that
// only count (filter_enforced off) or switch the filter off; the counters under each config's
// stat_prefix in /stats and /stats/prometheus; --mode validate refusing bad configs by path.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Json } from '../helpers/config_fixtures';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import { servableV3 } from '../helpers/cli_bootstraps';
import { mapLimited, runToExit } from '../helpers/cli_runs';
import { listenerClients, type Reply, startUpstream, type Upstream } from '../helpers/http_peers';
import { makeTempDir, type RunningProxy, sleep, startProxy } from '../helpers/proxy_process';

const TIMEOUT = { timeout: 60_000 };
const RATE_LIMIT_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit';
const ALWAYS = { default_value: { numerator: 100 } };
const NEVER = { default_value: { numerator: 0 } };
/** A fill far beyond the test's length: the bucket only empties. */
const NO_REFILL = '3600s';
const REFILL_MS = 300;

const rateLimit = (fields: Json): Json => ({ '@type': RATE_LIMIT_TYPE, ...fields });
const perFilter = (fields: Json): Json => ({ 'envoy.filters.http.local_ratelimit': rateLimit(fields) });

/** The listener of one protocol: its own filter, its own stat prefixes. */
function listener(name: string): Json {
  const filter = {
    name: 'envoy.filters.http.local_ratelimit',
    typed_config: rateLimit({
      stat_prefix: `${name}_rl`,
      status: { code: 'ServiceUnavailable' },
      token_bucket: { max_tokens: 3, tokens_per_fill: 3, fill_interval: NO_REFILL },
      filter_enabled: ALWAYS,
      filter_enforced: ALWAYS,
      response_headers_to_add: [{ header: { key: 'x-local-rate-limit', value: 'true' } }],
    }),
  };
  const routes = [
    {
      match: { prefix: '/refill' },
      route: { cluster: 'web' },
      typed_per_filter_config: perFilter({
        stat_prefix: `${name}_refill`,
        token_bucket: { max_tokens: 1, tokens_per_fill: 1, fill_interval: `${REFILL_MS / 1000}s` },
        filter_enabled: ALWAYS,
        filter_enforced: ALWAYS,
      }),
    },
    {
      match: { prefix: '/count' },
      route: { cluster: 'web' },
      typed_per_filter_config: perFilter({ stat_prefix: `${name}_count`, token_bucket: { max_tokens: 1, fill_interval: NO_REFILL }, filter_enabled: ALWAYS, filter_enforced: NEVER }),
    },
    {
      match: { prefix: '/off' },
      route: { cluster: 'web' },
      typed_per_filter_config: perFilter({ stat_prefix: `${name}_off`, token_bucket: { max_tokens: 1, fill_interval: NO_REFILL }, filter_enabled: NEVER }),
    },
    { match: { prefix: '/' }, route: { cluster: 'web' } },
  ];
  return httpListener(name, 0, routes, { stat_prefix: name, http_filters: [filter, { name: 'envoy.filters.http.router' }] });
}

describe('local rate limits on HTTP/1.1 and h2c', TIMEOUT, () => {
  let upstream: Upstream;
  let proxy: RunningProxy;
  const ports: Record<string, number> = {};
  const clients = listenerClients(ports);
  /** Each protocol's listener. */
  const LISTENERS: Record<string, string> = { 'HTTP/1.1': 'h1', h2c: 'h2' };

  before(async () => {
    upstream = await startUpstream('web', (_req, res) => res.end('from upstream'));
    const listeners = Object.values(LISTENERS).map(listener);
    proxy = await startProxy({ static_resources: { listeners, clusters: [localCluster('web', upstream.port)] } });
    for (const name of Object.values(LISTENERS)) ports[name] = await proxy.listenerPort(name);
  });

  after(async () => {
    clients.close();
    await proxy?.cleanup();
    await upstream?.close();
  });

  const counters = async (prefix: string): Promise<Record<string, number | undefined>> =>
    Object.fromEntries(await Promise.all(['enabled', 'ok', 'rate_limited', 'enforced'].map(async (name) => [name, await proxy.stat(`${prefix}.http_local_rate_limit.${name}`)])));
  const limited = (reply: Reply, status = 429): void => {
    assert.equal(reply.status, status);
    assert.equal(reply.body, 'local_rate_limited');
    assert.equal(reply.headers['x-proxy-ratelimited'], 'true');
  };

  for (const [protocol, send] of clients.protocols) {
    const name = LISTENERS[protocol]!;
    const get = (pathname: string) => send(name, { path: pathname });

    test(`${protocol}: the filter's bucket gives its tokens, then requests get its status, body and headers`, async () => {
      const seen = upstream.seen.length;
      for (let i = 0; i < 3; i++) assert.equal((await get('/')).body, 'from upstream');
      const reply = await get('/');
      limited(reply, 503);
      assert.equal(reply.headers['x-local-rate-limit'], 'true');
      limited(await send(name, { method: 'POST', path: '/', body: 'x'.repeat(1000) }), 503);
      assert.equal(upstream.seen.length, seen + 3);
      assert.deepEqual(await counters(`${name}_rl`), { enabled: 5, ok: 3, rate_limited: 2, enforced: 2 });
    });

    test(`${protocol}: a route's own bucket is refilled every fill_interval`, async () => {
      // Spent, whatever the phase of its fills.
      let spent = 0;
      let reply = await get('/refill');
      for (; reply.status === 200; reply = await get('/refill')) assert.ok(++spent < 10, 'the bucket never ran out');
      limited(reply);
      await sleep(REFILL_MS + 100);
      assert.equal((await get('/refill')).body, 'from upstream');
      assert.deepEqual(await counters(`${name}_refill`), { enabled: spent + 2, ok: spent + 1, rate_limited: 1, enforced: 1 });
      // The filter's own bucket, spent above, was not asked.
      assert.equal((await counters(`${name}_rl`)).enabled, 5);
    });

    test(`${protocol}: a route entry that does not enforce only counts; one that is off does nothing`, async () => {
      for (let i = 0; i < 3; i++) assert.equal((await get('/count')).body, 'from upstream');
      assert.deepEqual(await counters(`${name}_count`), { enabled: 3, ok: 1, rate_limited: 2, enforced: 0 });
      for (let i = 0; i < 3; i++) assert.equal((await get('/off')).body, 'from upstream');
      assert.deepEqual(await counters(`${name}_off`), { enabled: 0, ok: 0, rate_limited: 0, enforced: 0 });
    });
  }

  test('the counters in /stats/prometheus, by stat_prefix', async () => {
    const prometheus = (await proxy.admin('/stats/prometheus')).body;
    for (const name of ['enabled', 'ok', 'rate_limited', 'enforced']) {
      const value = await proxy.stat(`h1_rl.http_local_rate_limit.${name}`);
      assert.match(prometheus, new RegExp(`^proxy_h1_rl_http_local_rate_limit_${name}\\{\\} ${value}$`, 'm'));
    }
  });
});

test('--mode validate refuses local rate limit configs by field path', TIMEOUT, async () => {
  const dir = makeTempDir();
  try {
    const hcm = 'static_resources.listeners[1].filter_chains[0].filters[0].typed_config';
    const route = `${hcm}.route_config.virtual_hosts[0].routes[0]`;
    const filter = (fields: Json): Json => ({ name: 'envoy.filters.http.local_ratelimit', typed_config: rateLimit(fields) });
    const bucket = { max_tokens: 2, fill_interval: '1s' };
    const cases: Array<{ name: string; change: (hcm: Json) => void; error: string | null }> = [
      {
        name: 'valid',
        change: (c) => {
          c.http_filters.unshift(filter({ stat_prefix: 'rl', token_bucket: bucket, filter_enabled: ALWAYS }));
          c.route_config.virtual_hosts[0].typed_per_filter_config = perFilter({ stat_prefix: 'vhost', token_bucket: bucket });
        },
        error: null,
      },
      { name: 'a fill interval under 50 ms', change: (c) => c.http_filters.unshift(filter({ stat_prefix: 'rl', token_bucket: { max_tokens: 1, fill_interval: '0.01s' } })), error: `${hcm}.http_filters[0].typed_config.token_bucket.fill_interval: local rate limit token bucket fill timer must be >= 50ms` },
      {
        name: 'a route entry without a bucket',
        change: (c) => (c.route_config.virtual_hosts[0].routes[0].typed_per_filter_config = perFilter({ stat_prefix: 'r' })),
        error: `${route}.typed_per_filter_config["envoy.filters.http.local_ratelimit"].token_bucket: local rate limit token bucket must be set for per filter configs`,
      },
      {
        name: 'a per-connection bucket',
        change: (c) => (c.route_config.virtual_hosts[0].routes[0].typed_per_filter_config = perFilter({ stat_prefix: 'r', token_bucket: bucket, local_rate_limit_per_downstream_connection: true })),
        error: `${route}.typed_per_filter_config["envoy.filters.http.local_ratelimit"].local_rate_limit_per_downstream_connection: local_rate_limit_per_downstream_connection is not implemented by this build yet (it would be ignored)`,
      },
    ];
    const results = await mapLimited(cases, 2, (row) => {
      const config = servableV3('/dev/null');
      row.change(config.static_resources.listeners[1].filter_chains[0].filters[0].typed_config);
      const configPath = path.join(dir, `${row.name.replace(/\W+/g, '_')}.json`);
      fs.writeFileSync(configPath, JSON.stringify(config));
      return runToExit(['-c', configPath, '--mode', 'validate']).then((result) => ({ ...result, configPath }));
    });
    cases.forEach((row, i) => {
      const { code, stdout, stderr, configPath } = results[i]!;
      if (row.error === null) {
        assert.deepEqual({ code, stdout }, { code: 0, stdout: `configuration '${configPath}' OK\n` }, stderr);
        return;
      }
      assert.equal(code, 1, row.name);
      assert.ok(stderr.trimEnd().endsWith(`${configPath}: ${row.error}`), `${row.name}: ${stderr}`);
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
