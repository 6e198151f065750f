// RTDS on the real binary with two workers: an rtds_layer's values, from ADS or from a file,
// decide a route's runtime_fraction in both workers (HTTP/1.1 and h2c) and change with no
// restart; the server waits for the layer's first update before it serves; a bad resource is
// rejected by field path while the previous values keep serving; /runtime shows the layer by
// name; the stats are Envoy 1.16's, in /stats and /stats/prometheus; static EDS clusters start
// after RTDS, as in Envoy; and --mode validate agrees with serving on good and bad rtds_layers.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http2 from 'node:http2';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import { h2Request } from '../helpers/http_peers';
import { assertRefusedAlike, runToExit } from '../helpers/cli_runs';
import { makeTempDir, request, type RunningProxy, sleep, startProxy, waitFor } from '../helpers/proxy_process';
import { namedUpstream, type NamedUpstream } from '../helpers/socket_owner';
import { XdsServer } from '../helpers/xds_server';
import type { JsonObject, JsonValue } from '../../src/config/json';

const TIMEOUT = { timeout: 120_000 };
const RUNTIME_V3 = 'type.googleapis.com/envoy.service.runtime.v3.Runtime';
const RUNTIME_V2 = 'type.googleapis.com/envoy.service.discovery.v2.Runtime';
const CLA_V3 = 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment';

interface RuntimeJson {
  layers: string[];
  entries: Record<string, { final_value: string; layer_values: string[] }>;
}

/** A Runtime resource setting `routing.to_a` (the percentage of requests the route sends to `a`). */
function runtime(toA: JsonValue, name = 'flags', url = RUNTIME_V3): JsonObject {
  return { '@type': url, name, layer: { routing: { to_a: toA } } };
}

/**
 * Clusters a and b and a route sending `routing.to_a` percent of requests to a (100 by
 * default), the rest to b; runtime layers base (static), rtds (resource `flags` from
 * `rtdsConfig`) and admin.
 */
function bootstrap(upstreams: { a: number; b: number }, rtdsConfig: Record<string, unknown>, clusters: unknown[] = []): Record<string, unknown> {
  const routes = [
    { match: { prefix: '/', runtime_fraction: { default_value: { numerator: 100 }, runtime_key: 'routing.to_a' } }, route: { cluster: 'a' } },
    { match: { prefix: '/' }, route: { cluster: 'b' } },
  ];
  return {
    node: { id: 'rtds-test', cluster: 'rtds-test' },
    static_resources: {
      listeners: [httpListener('in', 0, routes)],
      clusters: [localCluster('a', upstreams.a), localCluster('b', upstreams.b), ...clusters],
    },
    layered_runtime: {
      layers: [
        { name: 'base', static_layer: { routing: { to_a: 100 }, other: 'static' } },
        { name: 'rtds', rtds_layer: { name: 'flags', rtds_config: rtdsConfig } },
        { name: 'admin', admin_layer: {} },
      ],
    },
  };
}

/** ADS to `xds` (the static cluster `xds`), V3. */
function adsBootstrap(xds: XdsServer, upstreams: { a: number; b: number }, initialFetchTimeout = '15s'): Record<string, unknown> {
  const config = bootstrap(upstreams, { ads: {}, resource_api_version: 'V3', initial_fetch_timeout: initialFetchTimeout }, [
    {
      name: 'xds',
      connect_timeout: '1s',
      http2_protocol_options: {},
      load_assignment: { cluster_name: 'xds', endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: xds.port } } } }] }] },
    },
  ]);
  config.dynamic_resources = { ads_config: { api_type: 'GRPC', transport_api_version: 'V3', grpc_services: [{ envoy_grpc: { cluster_name: 'xds' } }] } };
  return config;
}

/**
 * Requests on fresh HTTP/1.1 connections until both workers have been seen at `expected`, every
 * request since the first one there having gone there too (the change has reached both).
 */
async function untilBothWorkersRoute(port: number, expected: NamedUpstream, other: NamedUpstream, workers: readonly number[]): Promise<void> {
  await waitFor(
    `both workers to route to ${expected.name}`,
    async () => {
      const seenBefore = expected.seen.length;
      const otherBefore = other.seen.length;
      for (let i = 0; i < 8; i++) {
        const res = await request(`http://127.0.0.1:${port}/`, { headers: { connection: 'close' } });
        assert.equal(res.status, 200);
      }
      const seen = expected.seen.slice(seenBefore);
      return other.seen.length === otherBefore && workers.every((w) => seen.includes(w)) ? true : undefined;
    },
    30_000,
  );
}

/** Every one of a few h2c requests on one session answered by `expected`. */
async function h2cRoutesTo(port: number, expected: string): Promise<void> {
  const session = http2.connect(`http://127.0.0.1:${port}`);
  try {
    for (let i = 0; i < 4; i++) assert.equal((await h2Request(session, { path: '/' })).body, expected);
  } finally {
    session.destroy();
  }
}

async function runtimeOf(proxy: RunningProxy): Promise<RuntimeJson> {
  return JSON.parse((await proxy.admin('/runtime')).body) as RuntimeJson;
}

describe('RTDS over ADS, two workers', TIMEOUT, () => {
  let xds: XdsServer;
  let proxy: RunningProxy;
  let a: NamedUpstream;
  let b: NamedUpstream;
  let workers: number[] = [];
  let listener: number;

  before(async () => {
    xds = await XdsServer.start();
    a = await namedUpstream('a', () => workers);
    b = await namedUpstream('b', () => workers);
    // The first update sends everything to b: seen from the first request on, as the server
    // waits for it before it serves.
    xds.setResources(RUNTIME_V3, 'r1', [runtime(0)]);
    proxy = await startProxy(adsBootstrap(xds, { a: a.port, b: b.port }), ['--concurrency', '2']);
    workers = proxy.groupPids().filter((p) => p !== proxy.pid);
    assert.equal(workers.length, 2);
    listener = await proxy.listenerPort('in');
  });

  after(async () => {
    await proxy?.cleanup();
    a?.server.close();
    b?.server.close();
    await xds?.close();
  });

  test('the first update is in before the proxy serves; /runtime shows the layer by name', async () => {
    for (let i = 0; i < 6; i++) assert.equal((await request(`http://127.0.0.1:${listener}/`, { headers: { connection: 'close' } })).body, 'b');
    assert.equal(a.seen.length, 0);
    await h2cRoutesTo(listener, 'b');
    const rt = await runtimeOf(proxy);
    assert.deepEqual(rt.layers, ['base', 'rtds', 'admin']);
    assert.deepEqual(rt.entries['routing.to_a'], { final_value: '0', layer_values: ['100', '0', ''] });
    assert.deepEqual(rt.entries['other'], { final_value: 'static', layer_values: ['static', '', ''] });
    const first = xds.requests.find((r) => r.type_url === RUNTIME_V3)!;
    assert.equal(first.path, '/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources');
    assert.deepEqual(first.resource_names, ['flags']);
    assert.equal(first.node?.['id'], 'rtds-test');
  });

  test('a new version flips the route in both workers, HTTP/1.1 and h2c, with no restart', async () => {
    xds.setResources(RUNTIME_V3, 'r2', [runtime(100)]);
    await untilBothWorkersRoute(listener, a, b, workers);
    await h2cRoutesTo(listener, 'a');
    assert.equal((await runtimeOf(proxy)).entries['routing.to_a']?.final_value, '100');
    // The admin layer still overrides it, and the RTDS layer still sits below.
    assert.equal((await proxy.admin('/runtime_modify?routing.to_a=0', 'POST')).status, 200);
    await untilBothWorkersRoute(listener, b, a, workers);
    assert.equal((await proxy.admin('/runtime_modify?routing.to_a=', 'POST')).status, 200);
    await untilBothWorkersRoute(listener, a, b, workers);
  });

  test('a malformed layer is NACKed with its field path; the previous values keep serving', async () => {
    xds.setResources(RUNTIME_V3, 'r3', [runtime([0])]);
    const nack = await waitFor('the RTDS NACK', () => xds.requests.find((r) => r.type_url === RUNTIME_V3 && r.error_detail !== null), 20_000);
    assert.equal(nack.version_info, 'r2');
    assert.match(nack.error_detail!.message, /resources\[0\]\.layer\.routing\.to_a: Invalid runtime entry value for routing\.to_a/);
    await waitFor('update_rejected', async () => ((await proxy.stat('update_rejected')) === 1 ? true : undefined));
    await untilBothWorkersRoute(listener, a, b, workers);
    assert.equal((await runtimeOf(proxy)).entries['routing.to_a']?.layer_values[1], '100');
  });

  test('the stats: runtime.* and the RTDS subscription in Envoy 1.16 root scope, in /stats and /stats/prometheus', async () => {
    assert.equal(await proxy.stat('update_success'), 2);
    assert.equal(await proxy.stat('update_rejected'), 1);
    assert.equal(await proxy.stat('update_failure'), 0);
    assert.equal(await proxy.stat('init_fetch_timeout'), 0);
    assert.equal(await proxy.stat('runtime.num_layers'), 3);
    assert.equal(await proxy.stat('runtime.num_keys'), 2);
    assert.equal(await proxy.stat('runtime.load_error'), 0);
    // The start's load, r1, r2, and two admin changes.
    assert.equal(await proxy.stat('runtime.load_success'), 5);
    const text = (await proxy.admin('/stats')).body;
    assert.match(text, /^update_success: 2$/m);
    assert.match(text, /^update_rejected: 1$/m);
    assert.match(text, /^version: \d+$/m);
    const prometheus = (await proxy.admin('/stats/prometheus')).body;
    assert.match(prometheus, /^# TYPE proxy_update_success counter\nproxy_update_success\{\} 2$/m);
    assert.match(prometheus, /^proxy_update_rejected\{\} 1$/m);
    assert.match(prometheus, /^proxy_runtime_num_layers\{\} 3$/m);
  });
});

describe('RTDS from a file, two workers', TIMEOUT, () => {
  let proxy: RunningProxy;
  let a: NamedUpstream;
  let b: NamedUpstream;
  let workers: number[] = [];
  let listener: number;
  let dir: string;
  let file: string;

  /** Writes the response aside and renames it into place. */
  function push(version: string, resources: unknown[]): void {
    const aside = `${file}.${version}.tmp`;
    fs.writeFileSync(aside, JSON.stringify({ version_info: version, resources }));
    fs.renameSync(aside, file);
  }

  before(async () => {
    dir = makeTempDir();
    file = path.join(dir, 'rtds.json');
    a = await namedUpstream('a', () => workers);
    b = await namedUpstream('b', () => workers);
    push('1', [runtime(0)]);
    proxy = await startProxy(bootstrap({ a: a.port, b: b.port }, { path: file }), ['--concurrency', '2']);
    workers = proxy.groupPids().filter((p) => p !== proxy.pid);
    listener = await proxy.listenerPort('in');
  });

  after(async () => {
    await proxy?.cleanup();
    a?.server.close();
    b?.server.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  test('the file read at start, then each renamed file (a v2 resource too) flips the route in both workers', async () => {
    for (let i = 0; i < 4; i++) assert.equal((await request(`http://127.0.0.1:${listener}/`, { headers: { connection: 'close' } })).body, 'b');
    push('2', [runtime(100, 'flags', RUNTIME_V2)]);
    await untilBothWorkersRoute(listener, a, b, workers);
    await h2cRoutesTo(listener, 'a');
    push('3', [runtime(0)]);
    await untilBothWorkersRoute(listener, b, a, workers);
    assert.equal(await proxy.stat('update_success'), 3);
  });

  test('a resource of another name, or two resources, are rejected; the previous values keep serving', async () => {
    push('4', [runtime(100, 'not-flags')]);
    await waitFor('the first rejection', async () => ((await proxy.stat('update_rejected')) === 1 ? true : undefined));
    push('5', [runtime(100), runtime(100)]);
    await waitFor('the second rejection', async () => ((await proxy.stat('update_rejected')) === 2 ? true : undefined));
    // The log lines come through a pipe: they may follow the counter.
    await waitFor('the rejections logged', () =>
      /resources\[0\]\.name: Unexpected RTDS runtime \(expecting flags\): not-flags/.test(proxy.stderr) && /Unexpected RTDS resource length: 2/.test(proxy.stderr) ? true : undefined,
    );
    await untilBothWorkersRoute(listener, b, a, workers);
    assert.deepEqual((await runtimeOf(proxy)).entries['routing.to_a'], { final_value: '0', layer_values: ['100', '0', ''] });
  });
});

describe('RTDS initial_fetch_timeout, and the start order', TIMEOUT, () => {
  test('without an answer the server starts once the timeout passes, the layer empty, and takes the update later; EDS waits for it', async (t) => {
    const xds = await XdsServer.start();
    t.after(() => xds.close());
    let workers: number[] = [];
    const a = await namedUpstream('a', () => workers);
    const b = await namedUpstream('b', () => workers);
    t.after(() => {
      a.server.close();
      b.server.close();
    });
    // A static EDS cluster is a secondary one: Envoy asks for its endpoints once RTDS is done.
    const config = adsBootstrap(xds, { a: a.port, b: b.port }, '3s') as { static_resources: { clusters: unknown[] } };
    config.static_resources.clusters.push({ name: 'e', type: 'EDS', connect_timeout: '1s', eds_cluster_config: { eds_config: { ads: {}, resource_api_version: 'V3' } } });
    xds.setResources(CLA_V3, 'e1', [{ '@type': CLA_V3, cluster_name: 'e', endpoints: [] }]);
    const starting = startProxy(config, ['--concurrency', '2']);
    t.after(async () => (await starting.catch(() => null))?.cleanup());
    await waitFor('the RTDS request', () => xds.requests.find((r) => r.type_url === RUNTIME_V3), 20_000);
    await sleep(500);
    assert.equal(xds.requests.some((r) => r.type_url === CLA_V3), false, 'no EDS request while RTDS waits for its first update');
    const proxy = await starting;
    assert.ok(xds.requests.some((r) => r.type_url === CLA_V3));
    workers = proxy.groupPids().filter((p) => p !== proxy.pid);
    const listener = await proxy.listenerPort('in');
    assert.equal(await proxy.stat('init_fetch_timeout'), 1);
    assert.deepEqual((await runtimeOf(proxy)).entries['routing.to_a'], { final_value: '100', layer_values: ['100', '', ''] });
    await untilBothWorkersRoute(listener, a, b, workers);
    xds.setResources(RUNTIME_V3, 'late', [runtime(0)]);
    await untilBothWorkersRoute(listener, b, a, workers);
  });
});

describe('rtds_layer in --mode validate as when serving', TIMEOUT, () => {
  /** The configuration in a file of `dir`, with an admin block; its path. */
  function writeBootstrap(config: Record<string, unknown>, dir: string): string {
    const configPath = path.join(dir, 'bootstrap.json');
    fs.writeFileSync(configPath, JSON.stringify({ ...config, admin: { access_log_path: '/dev/null', address: { socket_address: { address: '127.0.0.1', port_value: 0 } } } }));
    return configPath;
  }

  test('a good rtds_layer validates (exit 0); bad ones are refused by field path, validate and serve alike', async () => {
    const dir = makeTempDir();
    try {
      const file = path.join(dir, 'rtds.json');
      fs.writeFileSync(file, JSON.stringify({ version_info: '1', resources: [runtime(0)] }));
      const ports = { a: 1, b: 2 };
      const good = await runToExit(['--mode', 'validate', '-c', writeBootstrap(bootstrap(ports, { path: file }), dir)]);
      assert.equal(good.code, 0, good.stderr);

      const bad: ReadonlyArray<[Record<string, unknown>, RegExp]> = [
        [bootstrap(ports, { path: path.join(dir, 'missing.json') }), /layered_runtime\.layers\[1\]\.rtds_layer\.rtds_config\.path: paths must refer to an existing path in the system: '.*missing\.json' does not exist/],
        [bootstrap(ports, { ads: {} }), /layered_runtime\.layers\[1\]\.rtds_layer\.rtds_config\.ads: ADS must be configured to support an ADS config source/],
        [
          bootstrap(ports, { api_config_source: { api_type: 'GRPC', grpc_services: [{ envoy_grpc: { cluster_name: 'nowhere' } }] } }),
          /layered_runtime\.layers\[1\]\.rtds_layer\.rtds_config\.api_config_source\.grpc_services\[0\]\.envoy_grpc\.cluster_name: ApiConfigSource must have a statically defined non-EDS cluster: 'nowhere'/,
        ],
        // AUTO is V2, as in Envoy 1.16: the v2 type URL is named.
        [{ ...bootstrap(ports, { path: file }), node: {} }, /layered_runtime\.layers\[1\]\.rtds_layer\.rtds_config: type\.googleapis\.com\/envoy\.service\.discovery\.v2\.Runtime: node 'id' and 'cluster' are required/],
        [bootstrap(ports, { self: {} }), /layered_runtime\.layers\[1\]\.rtds_layer\.rtds_config\.self: self is not implemented/],
      ];
      for (const [config, error] of bad) await assertRefusedAlike(writeBootstrap(config, dir), error);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
