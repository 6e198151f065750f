// proxy.filters.http.csrf through the real binary, over HTTP/1.1 and h2c alike: state-changing
// requests from the destination's own origin (Origin, else Referer) or an additional origin go
// upstream, others get 403 `Invalid origin`; GETs are never judged; per-route policies from
// typed_per_filter_config (a route's, a virtual host's, a weighted cluster's: the one the router
// takes) shadow, disable or tighten the filter's; filter_enabled follows its runtime key; the
// csrf counters in /stats and /stats/prometheus; --mode validate refuses bad policies by path.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Json } from '../helpers/config_fixtures';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import { servableV3 } from '../helpers/cli_bootstraps';
import { mapLimited, runToExit } from '../helpers/cli_runs';
import { listenerClients, type Reply, startUpstream, type Upstream } from '../helpers/http_peers';
import { makeTempDir, type RunningProxy, startProxy } from '../helpers/proxy_process';

const TIMEOUT = { timeout: 60_000 };
const CSRF_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.csrf.v3.CsrfPolicy';
const ROUTER = { name: 'envoy.filters.http.router' };
const percent = (numerator: number, runtimeKey?: string): Json => ({ default_value: { numerator }, ...(runtimeKey !== undefined ? { runtime_key: runtimeKey } : {}) });
const policy = (fields: Json): Json => ({ '@type': CSRF_TYPE, ...fields });
const perFilter = (fields: Json): Json => ({ 'envoy.filters.http.csrf': policy(fields) });

const CSRF_FILTER = {
  name: 'envoy.filters.http.csrf',
  typed_config: policy({ filter_enabled: percent(100, 'csrf.enabled'), additional_origins: [{ exact: 'trusted.example' }] }),
};

const ROUTES = [
  { match: { prefix: '/shadow' }, route: { cluster: 'a' }, typed_per_filter_config: perFilter({ filter_enabled: percent(0), shadow_enabled: percent(100) }) },
  { match: { prefix: '/off' }, route: { cluster: 'a' }, typed_per_filter_config: perFilter({ filter_enabled: percent(0) }) },
  {
    match: { prefix: '/split' },
    route: {
      weighted_clusters: {
        clusters: [
          // The entry's own policy lets anything through to a; b keeps the filter's.
          { name: 'a', weight: 50, typed_per_filter_config: perFilter({ filter_enabled: percent(0) }) },
          { name: 'b', weight: 50 },
        ],
      },
    },
  },
  { match: { prefix: '/' }, route: { cluster: 'a' } },
];

/** A virtual host whose policy has no additional origin, but one route that turns it off. */
const STRICT_HOST = {
  name: 'strict',
  domains: ['strict.example'],
  typed_per_filter_config: { 'envoy.csrf': policy({ filter_enabled: percent(100) }) },
  routes: [
    { match: { prefix: '/open' }, route: { cluster: 'a' }, typed_per_filter_config: perFilter({ filter_enabled: percent(0) }) },
    { match: { prefix: '/' }, route: { cluster: 'a' } },
  ],
};

describe('CSRF on HTTP/1.1 and h2c', TIMEOUT, () => {
  let upstreamA: Upstream;
  let upstreamB: Upstream;
  let proxy: RunningProxy;
  const ports: Record<string, number> = {};
  const clients = listenerClients(ports);

  before(async () => {
    upstreamA = await startUpstream('a', (_req, res) => res.end('from a'));
    upstreamB = await startUpstream('b', (_req, res) => res.end('from b'));
    const listener = httpListener('csrf', 0, ROUTES, { http_filters: [CSRF_FILTER, ROUTER] });
    const routeConfig = listener.filter_chains[0].filters[0].typed_config.route_config;
    routeConfig.virtual_hosts.unshift(STRICT_HOST);
    proxy = await startProxy({ static_resources: { listeners: [listener], clusters: [localCluster('a', upstreamA.port), localCluster('b', upstreamB.port)] } });
    ports.csrf = await proxy.listenerPort('csrf');
  });

  after(async () => {
    clients.close();
    await proxy?.cleanup();
    await upstreamA?.close();
    await upstreamB?.close();
  });

  const counters = async (): Promise<Record<string, number | undefined>> => ({
    missing: await proxy.stat('http.ingress_http.csrf.missing_source_origin'),
    invalid: await proxy.stat('http.ingress_http.csrf.request_invalid'),
    valid: await proxy.stat('http.ingress_http.csrf.request_valid'),
  });
  /** What `run` added to each counter. */
  const counted = async (run: () => Promise<void>): Promise<Record<string, number>> => {
    const before = await counters();
    await run();
    const now = await counters();
    return Object.fromEntries(Object.entries(now).map(([name, value]) => [name, (value ?? 0) - (before[name] ?? 0)]));
  };
  const refused = (reply: Reply): void => {
    assert.equal(reply.status, 403);
    assert.equal(reply.body, 'Invalid origin');
  };

  for (const [protocol, send] of clients.protocols) {
    const to = (host: string, method: string, pathname: string, headers: Record<string, string> = {}) =>
      send('csrf', { method, path: pathname, headers: protocol === 'h2c' ? { ':authority': host, ...headers } : { host, ...headers } });

    test(`${protocol}: requests from the destination's origin, by Origin or Referer, or from an additional origin go upstream`, async () => {
      const delta = await counted(async () => {
        for (const reply of [
          await to('app.example:8080', 'POST', '/', { origin: 'https://app.example:8080' }),
          await to('app.example', 'PUT', '/', { referer: 'http://app.example/form?x=1' }),
          await to('app.example', 'DELETE', '/', { origin: 'https://trusted.example' }),
          // An empty Origin leaves it to the Referer.
          await to('app.example', 'PATCH', '/', { origin: '', referer: 'https://app.example/' }),
        ]) {
          assert.equal(reply.status, 200);
          assert.equal(reply.body, 'from a');
        }
      });
      assert.deepEqual(delta, { missing: 0, invalid: 0, valid: 4 });
    });

    test(`${protocol}: a state-changing request from another origin, or from none, gets 403`, async () => {
      const seen = upstreamA.seen.length;
      const delta = await counted(async () => {
        refused(await to('app.example', 'POST', '/', { origin: 'https://evil.example' }));
        refused(await to('app.example', 'PUT', '/', { referer: 'https://evil.example/page' }));
        refused(await to('app.example', 'PATCH', '/', { origin: 'null' }));
        // Another port is another origin.
        refused(await to('app.example:8443', 'DELETE', '/', { origin: 'https://app.example' }));
        // None at all counts as missing and as invalid, as in Envoy.
        refused(await to('app.example', 'POST', '/'));
      });
      assert.deepEqual(delta, { missing: 1, invalid: 5, valid: 0 });
      assert.equal(upstreamA.seen.length, seen);
    });

    test(`${protocol}: other methods are not judged`, async () => {
      const delta = await counted(async () => {
        for (const method of ['GET', 'HEAD', 'OPTIONS']) assert.equal((await to('app.example', method, '/', { origin: 'https://evil.example' })).status, 200, method);
      });
      assert.deepEqual(delta, { missing: 0, invalid: 0, valid: 0 });
    });

    test(`${protocol}: a route's policy shadows or turns off the filter's`, async () => {
      const delta = await counted(async () => {
        // Shadow mode judges and counts, and lets the request go.
        assert.equal((await to('app.example', 'POST', '/shadow', { origin: 'https://evil.example' })).body, 'from a');
        assert.equal((await to('app.example', 'POST', '/shadow', { origin: 'https://app.example' })).body, 'from a');
        assert.equal((await to('app.example', 'POST', '/off', { origin: 'https://evil.example' })).body, 'from a');
      });
      assert.deepEqual(delta, { missing: 0, invalid: 1, valid: 1 });
    });

    test(`${protocol}: a virtual host's policy replaces the filter's; its route's replaces the virtual host's`, async () => {
      // The filter's additional origin is not the strict host's.
      refused(await to('strict.example', 'POST', '/', { origin: 'https://trusted.example' }));
      assert.equal((await to('strict.example', 'POST', '/', { origin: 'http://strict.example' })).status, 200);
      assert.equal((await to('strict.example', 'POST', '/open', { origin: 'https://trusted.example' })).status, 200);
    });

    test(`${protocol}: a weighted cluster's policy is the one of the cluster the router takes`, async () => {
      const bodies = new Map<string, number>();
      for (let i = 0; i < 24; i++) {
        const reply = await to('app.example', 'POST', '/split', { origin: 'https://evil.example' });
        // b is judged by the filter's policy: its requests never reach it.
        const outcome = reply.status === 403 ? reply.body : `${reply.status} ${reply.body}`;
        bodies.set(outcome, (bodies.get(outcome) ?? 0) + 1);
      }
      assert.deepEqual([...bodies.keys()].sort(), ['200 from a', 'Invalid origin']);
      assert.equal(upstreamB.seen.length, 0);
    });
  }

  test('filter_enabled follows its runtime key; the counters in /stats/prometheus', async () => {
    const [, send] = clients.protocols[0]!;
    const post = () => send('csrf', { method: 'POST', path: '/', headers: { host: 'app.example', origin: 'https://evil.example' } });
    assert.equal((await proxy.admin('/runtime_modify?csrf.enabled=0', 'POST')).status, 200);
    assert.equal((await post()).status, 200);
    assert.equal((await proxy.admin('/runtime_modify?csrf.enabled=100', 'POST')).status, 200);
    assert.equal((await post()).status, 403);
    const prometheus = (await proxy.admin('/stats/prometheus')).body;
    for (const name of ['missing_source_origin', 'request_invalid', 'request_valid']) {
      const value = await proxy.stat(`http.ingress_http.csrf.${name}`);
      assert.match(prometheus, new RegExp(`^proxy_http_csrf_${name}\\{proxy_http_conn_manager_prefix="ingress_http"\\} ${value}$`, 'm'));
    }
  });
});

test('--mode validate refuses CSRF policies by field path', TIMEOUT, async () => {
  const dir = makeTempDir();
  try {
    const hcm = 'static_resources.listeners[1].filter_chains[0].filters[0].typed_config';
    const route = `${hcm}.route_config.virtual_hosts[0].routes[0]`;
    const cases: Array<{ name: string; change: (hcm: Json) => void; error: string | null }> = [
      {
        name: 'valid',
        change: (c) => {
          c.http_filters.unshift(CSRF_FILTER);
          c.route_config.virtual_hosts[0].routes[0].typed_per_filter_config = { 'envoy.csrf': policy({ filter_enabled: percent(0) }) };
        },
        error: null,
      },
      { name: 'no filter_enabled', change: (c) => c.http_filters.unshift({ name: 'envoy.filters.http.csrf', typed_config: policy({}) }), error: `${hcm}.http_filters[0].typed_config.filter_enabled: value is required` },
      {
        name: 'a route policy of another type',
        change: (c) => (c.route_config.virtual_hosts[0].routes[0].typed_per_filter_config = { 'envoy.csrf': { '@type': 'type.googleapis.com/envoy.extensions.filters.http.cors.v3.Cors' } }),
        error: `${route}.typed_per_filter_config["envoy.csrf"].@type: expected type envoy.extensions.filters.http.csrf.v3.CsrfPolicy for envoy.csrf, got 'type.googleapis.com/envoy.extensions.filters.http.cors.v3.Cors'`,
      },
      {
        name: 'a route policy for the router',
        change: (c) => (c.route_config.virtual_hosts[0].routes[0].typed_per_filter_config = { 'envoy.filters.http.router': { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } }),
        error: `${route}.typed_per_filter_config["envoy.filters.http.router"]: the filter 'envoy.filters.http.router' takes no per-route configuration in this build (it would be ignored)`,
      },
      {
        name: 'a bad origin regex',
        change: (c) => (c.route_config.virtual_hosts[0].routes[0].typed_per_filter_config = perFilter({ filter_enabled: percent(1), additional_origins: [{ safe_regex: { google_re2: {}, regex: '[' } }] })),
        error: `${route}.typed_per_filter_config["envoy.filters.http.csrf"].additional_origins[0].safe_regex.regex: invalid regex '[': missing closing ]`,
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
