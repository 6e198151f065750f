// RDS on a real proxy with two workers, from a file renamed into place and over ADS from a gRPC
// management server the test runs (and, more briefly, over a stream of its own and REST): two listeners name one route configuration and share its
// subscription; requests route by what arrives; a change reaches an open HTTP/1.1 keep-alive
// connection and an h2c session on their next request, neither closed; a bad configuration is
// NACKed naming its field and the previous one keeps serving; the stats (in /stats and
// /stats/prometheus) and /config_dump show it. Before the first update the server is not ready,
// and after initial_fetch_timeout it serves 404s. --mode validate refuses a bad `rds` as serving does.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as http2 from 'node:http2';
import type * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { httpListener } from '../helpers/config_fixtures';
import { assertRefusedAlike } from '../helpers/cli_runs';
import { giveUpAfter, livePidsWhere, request, type RunningProxy, spawnProxy, startProxy, waitFor } from '../helpers/proxy_process';
import { namedUpstream, type NamedUpstream } from '../helpers/socket_owner';
import { XdsServer } from '../helpers/xds_server';
import type { JsonObject } from '../../src/config/json';

const TIMEOUT = { timeout: 120_000 };
const ROUTE_TYPE = 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration';
const ROUTE_TYPE_V2 = 'type.googleapis.com/envoy.api.v2.RouteConfiguration';
const FAULT_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault';
/** A fault filter that injects nothing unless a route's own HTTPFault says so. */
const FAULT_FILTER = { name: 'envoy.filters.http.fault', typed_config: { '@type': FAULT_TYPE, abort: { http_status: 503, percentage: { numerator: 0 } } } };
const ROUTER = { name: 'proxy.filters.http.router' };

/** The route configuration `routes`: everything to `target`, and /fixed to cluster a. */
function routeConfig(target: string, extra: JsonObject = {}, typeUrl = ROUTE_TYPE): JsonObject {
  return {
    '@type': typeUrl,
    name: 'routes',
    virtual_hosts: [
      {
        name: 'all',
        domains: ['*'],
        routes: [
          { match: { prefix: '/fixed' }, route: { cluster: 'a' } },
          { match: { prefix: '/' }, route: { cluster: target }, response_headers_to_add: [{ header: { key: 'x-route', value: target } }] },
        ],
      },
    ],
    ...extra,
  };
}

function staticCluster(name: string, port: number, extra: JsonObject = {}): JsonObject {
  return {
    name,
    connect_timeout: '1s',
    load_assignment: { cluster_name: name, endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: port } } } }] }] },
    ...extra,
  };
}

/** The configuration the tests change to: everything to c, and /fixed aborted with 451 by its own HTTPFault. */
function changedRouteConfig(): JsonObject {
  const config = routeConfig('c');
  const fixed = (config['virtual_hosts'] as JsonObject[])[0]!['routes'] as JsonObject[];
  fixed[0] = { ...fixed[0]!, typed_per_filter_config: { 'envoy.filters.http.fault': { '@type': FAULT_TYPE, abort: { http_status: 451, percentage: { numerator: 100 } } } } };
  return config;
}

/** Two listeners (stat prefixes `first`, `second`) naming route configuration `routes` from `configSource`. */
function bootstrap(configSource: JsonObject, clusters: JsonObject[], extra: JsonObject = {}): Record<string, unknown> {
  const rds = { config_source: configSource, route_config_name: 'routes' };
  return {
    node: { id: 'rds-test', cluster: 'rds-test' },
    static_resources: {
      listeners: [
        httpListener('in', 0, [], { route_config: undefined, rds, stat_prefix: 'first', http_filters: [FAULT_FILTER, ROUTER] }),
        httpListener('in2', 0, [], { route_config: undefined, rds, stat_prefix: 'second', http_filters: [FAULT_FILTER, ROUTER] }),
      ],
      clusters,
    },
    ...extra,
  };
}

/** A DiscoveryResponse file written aside and renamed into place, as a management script does. */
function pushFile(file: string, version: string, resources: readonly JsonObject[]): void {
  const aside = `${file}.${version}.tmp`;
  fs.writeFileSync(aside, JSON.stringify({ version_info: version, resources }));
  fs.renameSync(aside, file);
}

async function get(port: number, urlPath = '/'): Promise<{ status: number; body: string; route: string | undefined }> {
  const r = await request(`http://127.0.0.1:${port}${urlPath}`, { headers: { connection: 'close' } });
  return { status: r.status, body: r.body, route: r.headers['x-route'] as string | undefined };
}

/** One HTTP/1.1 connection kept open: each request says which socket carried it. */
class KeepAliveClient {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  readonly sockets = new Set<net.Socket>();

  constructor(private readonly port: number) {}

  get(): Promise<string> {
    return new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: this.port, path: '/', agent: this.agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(Buffer.concat(chunks).toString()));
        res.on('error', reject);
      });
      req.on('socket', (socket: net.Socket) => this.sockets.add(socket));
      req.on('error', reject);
      req.setTimeout(10_000, () => req.destroy(new Error('keep-alive request timed out')));
      req.end();
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** One h2c session kept open; it records a GOAWAY or a close. */
class H2cClient {
  readonly session: http2.ClientHttp2Session;
  goaway = false;
  closed = false;

  constructor(port: number) {
    this.session = http2.connect(`http://127.0.0.1:${port}`);
    this.session.on('goaway', () => (this.goaway = true));
    this.session.on('close', () => (this.closed = true));
    this.session.on('error', () => undefined);
  }

  get(): Promise<string> {
    return new Promise((resolve, reject) => {
      const stream = this.session.request({ ':path': '/' });
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => resolve(Buffer.concat(chunks).toString()));
      stream.on('error', reject);
      stream.setTimeout(10_000, () => stream.close(http2.constants.NGHTTP2_CANCEL));
      stream.end();
    });
  }
}

/** Waits for the proxy to log a line matching `pattern` (the log reaches the pipe a little after the stats). */
async function logged(proxy: RunningProxy, pattern: RegExp): Promise<void> {
  await waitFor(`a log line matching ${String(pattern)}`, () => (pattern.test(proxy.stderr) ? true : undefined));
}

/** Requests, each on a connection of its own, until `upstream` has been reached from both workers. */
async function untilBothWorkersReach(port: number, upstream: NamedUpstream, workers: readonly number[], what: string): Promise<void> {
  await waitFor(
    what,
    async () => {
      for (let i = 0; i < 4; i++) await get(port);
      return workers.every((w) => upstream.seen.includes(w)) ? true : undefined;
    },
    30_000,
  );
}

interface Upstreams {
  readonly a: NamedUpstream;
  readonly b: NamedUpstream;
  readonly c: NamedUpstream;
  workers: number[];
}

async function upstreams(t: TestContext): Promise<Upstreams> {
  const state: { workers: number[] } = { workers: [] };
  const [a, b, c] = await Promise.all(['a', 'b', 'c'].map((name) => namedUpstream(name, () => state.workers)));
  t.after(() => {
    for (const u of [a, b, c]) u!.server.close();
  });
  return Object.assign(state, { a: a!, b: b!, c: c! });
}

/**
 * What both transports must do once `routes` (everything to b) serves: a change to c reaches an
 * open keep-alive connection and an h2c session on both listeners, with no connection closed,
 * and both workers.
 */
async function changeWhileConnected(proxy: RunningProxy, up: Upstreams, push: (version: string, config: JsonObject) => void): Promise<void> {
  const [first, second] = [await proxy.listenerPort('in'), await proxy.listenerPort('in2')];
  await untilBothWorkersReach(first, up.b, up.workers, 'both workers to route by the first configuration');
  assert.equal((await get(second)).body, 'b', 'the second listener shares the configuration');
  assert.equal((await get(first, '/fixed')).body, 'a');

  const keepAlive = new KeepAliveClient(first);
  const h2c = new H2cClient(second);
  try {
    assert.equal(await keepAlive.get(), 'b');
    assert.equal(await h2c.get(), 'b');
    push('2', changedRouteConfig());
    await waitFor('the keep-alive connection to follow the new route', async () => ((await keepAlive.get()) === 'c' ? true : undefined));
    await waitFor('the h2c session to follow the new route', async () => ((await h2c.get()) === 'c' ? true : undefined));
    assert.equal(keepAlive.sockets.size, 1, 'every request went over the one HTTP/1.1 connection');
    assert.ok(!h2c.goaway && !h2c.closed, 'the h2c session was neither told to go away nor closed');
    await untilBothWorkersReach(first, up.c, up.workers, 'both workers to route by the new configuration');
    assert.equal((await get(second)).body, 'c');
    // The fault filter prepared the new configuration's per-route HTTPFault in both workers.
    for (let i = 0; i < 6; i++) assert.equal((await get(i % 2 === 0 ? first : second, '/fixed')).status, 451);
  } finally {
    keepAlive.close();
    h2c.session.close();
  }
}

describe('RDS from a file, two listeners, two workers', TIMEOUT, () => {
  test('routes arrive, change under open connections, a bad one is rejected; stats and config_dump', async (t) => {
    const up = await upstreams(t);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-rds-'));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'rds.json');
    // A v2 resource as Envoy 1.16 reads one (resource_api_version AUTO is V2).
    pushFile(file, '1', [routeConfig('b', {}, ROUTE_TYPE_V2)]);
    const proxy = await startProxy(bootstrap({ path: file }, [staticCluster('a', up.a.port), staticCluster('b', up.b.port), staticCluster('c', up.c.port)]), [
      '--concurrency',
      '2',
    ]);
    t.after(() => proxy.cleanup());
    up.workers = proxy.groupPids().filter((p) => p !== proxy.pid);
    assert.equal(up.workers.length, 2);

    await changeWhileConnected(proxy, up, (version, config) => pushFile(file, version, [config]));
    const listener = await proxy.listenerPort('in');

    // validate_clusters: true checks the routes against the clusters there are: refused by field path.
    pushFile(file, '3', [routeConfig('nope', { validate_clusters: true })]);
    await waitFor('the rejection', async () => ((await proxy.stat('http.first.rds.routes.update_rejected')) === 1 ? true : undefined));
    await logged(proxy, /Error updating route configuration routes: virtual_hosts\[0\]\.routes\[1\]\.route\.cluster: route: unknown cluster 'nope'/);
    // A field this build does not implement (VHDS) is refused by its path.
    pushFile(file, '4', [routeConfig('b', { vhds: { config_source: { ads: {} } } })]);
    await waitFor('the second rejection', async () => ((await proxy.stat('http.first.rds.routes.update_rejected')) === 2 ? true : undefined));
    await logged(proxy, /Error updating route configuration routes: vhds: vhds \(virtual host discovery, VHDS\) is not supported/);
    // Another name is not this subscription's.
    pushFile(file, '5', [{ ...routeConfig('b'), name: 'other' }]);
    await waitFor('the third rejection', async () => ((await proxy.stat('http.first.rds.routes.update_rejected')) === 3 ? true : undefined));
    await logged(proxy, /Unexpected RDS configuration \(expecting routes\): other/);
    for (let i = 0; i < 4; i++) assert.equal((await get(listener)).body, 'c', 'the previous configuration keeps serving');
    // An update without the resource keeps what serves.
    pushFile(file, '6', []);
    await waitFor('update_empty', async () => ((await proxy.stat('http.first.rds.routes.update_empty')) === 1 ? true : undefined));
    assert.equal((await get(listener)).body, 'c');
    // The same content again: acknowledged, not reloaded.
    pushFile(file, '7', [changedRouteConfig()]);
    await waitFor('the same content accepted', async () => ((await proxy.stat('http.first.rds.routes.update_success')) === 4 ? true : undefined));

    // One subscription, under the first connection manager's stat_prefix, as in Envoy.
    assert.equal(await proxy.stat('http.first.rds.routes.config_reload'), 2);
    assert.equal(await proxy.stat('http.first.rds.routes.update_attempt'), 7);
    assert.equal(await proxy.stat('http.first.rds.routes.update_failure'), 0);
    assert.notEqual(await proxy.stat('http.first.rds.routes.version'), undefined);
    assert.equal(await proxy.stat('http.second.rds.routes.update_attempt'), undefined);
    const prometheus = (await proxy.admin('/stats/prometheus')).body;
    assert.match(prometheus, /^proxy_http_rds_config_reload\{[^}]*proxy_rds_route_config="routes"[^}]*\} 2$/m);
    assert.match(prometheus, /^proxy_http_rds_update_rejected\{[^}]*proxy_http_conn_manager_prefix="first"[^}]*\} 3$/m);

    const dump = JSON.parse((await proxy.admin('/config_dump?resource=dynamic_route_configs')).body) as {
      configs: { '@type': string; version_info: string; route_config: { '@type': string; name: string }; last_updated: string }[];
    };
    assert.equal(dump.configs.length, 1);
    const [dynamic] = dump.configs;
    assert.equal(dynamic!['@type'], 'type.googleapis.com/envoy.admin.v3.RoutesConfigDump.DynamicRouteConfig');
    assert.equal(dynamic!.version_info, '2', 'the version that brought the content serving');
    assert.equal(dynamic!.route_config['@type'], ROUTE_TYPE);
    assert.equal(dynamic!.route_config.name, 'routes');
    assert.match(dynamic!.last_updated, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal((await proxy.admin('/config_dump?resource=static_route_configs')).body, '{}\n');
  });
});

/** bootstrap() with RDS over ADS from `xds` (its static cluster `xds`). */
function adsBootstrap(xds: XdsServer, up: Upstreams, configSource: JsonObject = { ads: {}, resource_api_version: 'V3' }): Record<string, unknown> {
  const clusters = [
    staticCluster('a', up.a.port),
    staticCluster('b', up.b.port),
    staticCluster('c', up.c.port),
    staticCluster('xds', xds.port, { http2_protocol_options: {} }),
  ];
  return bootstrap(configSource, clusters, {
    dynamic_resources: { ads_config: { api_type: 'GRPC', transport_api_version: 'V3', grpc_services: [{ envoy_grpc: { cluster_name: 'xds' } }] } },
  });
}

describe('RDS over ADS from a gRPC management server, two listeners, two workers', TIMEOUT, () => {
  test('routes arrive, change under open connections; a bad one is NACKed by field path and the previous one serves', async (t) => {
    const xds = await XdsServer.start();
    t.after(() => xds.close());
    const up = await upstreams(t);
    xds.setResources(ROUTE_TYPE, 'r1', [routeConfig('b')]);
    const proxy = await startProxy(adsBootstrap(xds, up), ['--concurrency', '2']);
    t.after(() => proxy.cleanup());
    up.workers = proxy.groupPids().filter((p) => p !== proxy.pid);
    // One subscription for both listeners: the one name, asked for on the one stream.
    const asked = xds.requests.filter((r) => r.type_url === ROUTE_TYPE);
    assert.ok(asked.length > 0);
    assert.ok(asked.every((r) => r.path === '/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources'));
    assert.deepEqual([...new Set(asked.flatMap((r) => r.resource_names))], ['routes']);

    await changeWhileConnected(proxy, up, (version, config) => xds.setResources(ROUTE_TYPE, `r${version}`, [config]));

    xds.setResources(ROUTE_TYPE, 'r3', [routeConfig('nope', { validate_clusters: true })]);
    const nack = await waitFor('the RDS NACK', () => xds.requests.find((r) => r.type_url === ROUTE_TYPE && r.error_detail !== null));
    assert.equal(nack.error_detail!.code, 13);
    assert.match(nack.error_detail!.message, /^Error updating route configuration routes: virtual_hosts\[0\]\.routes\[1\]\.route\.cluster: route: unknown cluster 'nope'$/);
    assert.equal(nack.version_info, 'r2', 'the NACK carries the version still serving');
    const listener = await proxy.listenerPort('in');
    for (let i = 0; i < 4; i++) assert.equal((await get(listener)).body, 'c');
    assert.equal(await proxy.stat('http.first.rds.routes.update_rejected'), 1);
    assert.equal(await proxy.stat('http.first.rds.routes.config_reload'), 2);
    const dump = JSON.parse((await proxy.admin('/config_dump?resource=dynamic_route_configs')).body) as { configs: { version_info: string }[] };
    assert.equal(dump.configs[0]!.version_info, 'r2');

    // A worker started again gets the routes serving with its start (not the empty ones).
    const workerPids = () => livePidsWhere((stat) => stat.ppid === proxy.pid);
    const killed = up.workers[0]!;
    process.kill(killed, 'SIGKILL');
    const restarted = await waitFor('a restarted worker', () => workerPids().find((pid) => !up.workers.includes(pid)), 30_000);
    up.workers = [up.workers[1]!, restarted];
    await untilBothWorkersReach(listener, up.c, up.workers, 'the restarted worker to route by the configuration serving');
  });

  test('not ready before the first update; from it on, routes by it', async (t) => {
    const xds = await XdsServer.start();
    t.after(() => xds.close());
    const up = await upstreams(t);
    // initial_fetch_timeout 0: the server waits for RDS however long it takes.
    const config = adsBootstrap(xds, up, { ads: {}, resource_api_version: 'V3', initial_fetch_timeout: '0s' });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-rds-init-'));
    const configPath = path.join(dir, 'bootstrap.json');
    const addressPath = path.join(dir, 'admin_address');
    const admin = { access_log_path: path.join(dir, 'admin.log'), address: { socket_address: { address: '127.0.0.1', port_value: 0 } } };
    fs.writeFileSync(configPath, JSON.stringify({ ...config, admin }));
    const proc = spawnProxy(['-c', configPath, '--admin-address-path', addressPath, '--disable-hot-restart', '--concurrency', '2'], { dir });
    t.after(() => proc.cleanup());
    const adminUrl = `http://${await waitFor('the admin address', () => (fs.existsSync(addressPath) && fs.readFileSync(addressPath, 'utf8')) || undefined)}`;
    await waitFor('the RDS request', () => xds.requests.find((r) => r.type_url === ROUTE_TYPE));
    const ready = await request(`${adminUrl}/ready`);
    assert.equal(ready.status, 503);
    assert.equal(ready.body, 'INITIALIZING\n');
    xds.setResources(ROUTE_TYPE, 'r1', [routeConfig('b')]);
    await waitFor('/ready', async () => ((await request(`${adminUrl}/ready`)).status === 200 ? true : undefined));
    const listeners = (await request(`${adminUrl}/listeners`)).body;
    const port = Number(/^in::127\.0\.0\.1:(\d+)$/m.exec(listeners)![1]);
    assert.equal((await get(port)).body, 'b');
  });

  test('after initial_fetch_timeout the server serves, answering 404 until routes come', async (t) => {
    const xds = await XdsServer.start();
    t.after(() => xds.close());
    const up = await upstreams(t);
    const proxy = await startProxy(adsBootstrap(xds, up, { ads: {}, resource_api_version: 'V3', initial_fetch_timeout: '0.5s' }), ['--concurrency', '2']);
    t.after(() => proxy.cleanup());
    const listener = await proxy.listenerPort('in');
    assert.equal((await get(listener)).status, 404);
    assert.equal(await proxy.stat('http.first.no_route'), 1);
    assert.equal(await proxy.stat('http.first.rds.routes.init_fetch_timeout'), 1);
    // Neither listed before it comes, as in Envoy.
    assert.equal((await proxy.admin('/config_dump?resource=dynamic_route_configs')).body, '{}\n');
    xds.setResources(ROUTE_TYPE, 'r1', [routeConfig('b')]);
    await waitFor('the routes', async () => ((await get(listener)).body === 'b' ? true : undefined));
  });
});

describe('RDS over a stream of its own (V2), over REST and over delta xDS', TIMEOUT, () => {
  test('StreamRoutes at its v2 path with v2 resources, /v3/discovery:routes polled, and DeltaRoutes each bring the routes', async (t) => {
    const xds = await XdsServer.start();
    t.after(() => xds.close());
    const up = await upstreams(t);
    xds.setResources(ROUTE_TYPE_V2, 'g1', [routeConfig('b', {}, ROUTE_TYPE_V2)]);
    xds.setResources(ROUTE_TYPE, 'r1', [routeConfig('c')]);
    const clusters = [
      staticCluster('a', up.a.port),
      staticCluster('b', up.b.port),
      staticCluster('c', up.c.port),
      staticCluster('xds', xds.port, { http2_protocol_options: {} }),
      staticCluster('xds_rest', xds.restPort),
    ];
    const grpc = { api_config_source: { api_type: 'GRPC', transport_api_version: 'V2', grpc_services: [{ envoy_grpc: { cluster_name: 'xds' } }] }, resource_api_version: 'V2' };
    const rest = { api_config_source: { api_type: 'REST', transport_api_version: 'V3', cluster_names: ['xds_rest'], refresh_delay: '0.2s' }, resource_api_version: 'V3' };
    const delta = { api_config_source: { api_type: 'DELTA_GRPC', transport_api_version: 'V3', grpc_services: [{ envoy_grpc: { cluster_name: 'xds' } }] }, resource_api_version: 'V3' };
    for (const [source, expected, method] of [
      [grpc, 'b', '/envoy.api.v2.RouteDiscoveryService/StreamRoutes'],
      [rest, 'c', '/v3/discovery:routes'],
      [delta, 'c', '/envoy.service.route.v3.RouteDiscoveryService/DeltaRoutes'],
    ] as const) {
      const proxy = await startProxy(bootstrap(source, clusters), ['--concurrency', '2']);
      try {
        assert.equal((await get(await proxy.listenerPort('in'))).body, expected);
        assert.equal((await get(await proxy.listenerPort('in2'))).body, expected);
        const asked = source === delta ? xds.delta.requests.filter((r) => r.path === method) : xds.requests.filter((r) => r.path === method);
        assert.ok(asked.length > 0, `no request at ${method}`);
        assert.deepEqual([...new Set(asked.map((r) => r.type_url))], [source === grpc ? ROUTE_TYPE_V2 : ROUTE_TYPE]);
        const names = asked.flatMap((r) => ('resource_names' in r ? r.resource_names : r.resource_names_subscribe));
        assert.deepEqual([...new Set(names)], ['routes']);
        assert.ok(((await proxy.stat('http.first.rds.routes.update_success')) ?? 0) >= 1);
      } finally {
        await proxy.cleanup();
      }
    }
  });
});

describe('a bad rds block, in --mode validate as when serving', TIMEOUT, () => {
  const hcm = 'static_resources\\.listeners\\[0\\]\\.filter_chains\\[0\\]\\.filters\\[0\\]\\.typed_config';
  const node = { id: 'n', cluster: 'c' };
  const cluster = staticCluster('a', 1);
  const cases: ReadonlyArray<[string, Record<string, unknown>, RegExp]> = [
    ['an ADS source without ads_config', { node, ...bootstrap({ ads: {} }, [cluster]) }, new RegExp(`${hcm}\\.rds\\.config_source\\.ads: ADS must be configured to support an ADS config source`)],
    [
      'a file that does not exist',
      bootstrap({ path: '@MISSING@' }, [cluster]),
      new RegExp(`${hcm}\\.rds\\.config_source\\.path: paths must refer to an existing path in the system: '.*missing\\.json' does not exist`),
    ],
    [
      'a node without id and cluster',
      { ...bootstrap({ path: '@RDS@' }, [cluster]), node: {} },
      new RegExp(`${hcm}\\.rds: rds: node 'id' and 'cluster' are required`),
    ],
    [
      'an API source naming no static cluster',
      bootstrap({ api_config_source: { api_type: 'GRPC', grpc_services: [{ envoy_grpc: { cluster_name: 'nowhere' } }] } }, [cluster]),
      new RegExp(`${hcm}\\.rds\\.config_source\\.api_config_source\\.grpc_services\\[0\\]\\.envoy_grpc\\.cluster_name: ApiConfigSource must have a statically defined non-EDS cluster: 'nowhere'`),
    ],
    [
      'scoped_routes',
      {
        node,
        static_resources: {
          listeners: [
            httpListener('in', 0, [], {
              route_config: undefined,
              scoped_routes: {
                name: 's',
                scope_key_builder: { fragments: [{ header_value_extractor: { name: 'x-scope', index: 0 } }] },
                rds_config_source: { path: '@RDS@' },
                scoped_rds: { scoped_rds_config_source: { path: '@RDS@' } },
              },
            }),
          ],
          clusters: [cluster],
        },
      },
      new RegExp(`${hcm}\\.scoped_routes: scoped_routes is not supported yet`),
    ],
  ];
  for (const [what, config, error] of cases) {
    test(`${what} is refused with exit 1, for validate and serve alike`, async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-rds-pre-'));
      try {
        const rdsPath = path.join(dir, 'rds.json');
        fs.writeFileSync(rdsPath, JSON.stringify({ version_info: '1', resources: [] }));
        const configPath = path.join(dir, 'bootstrap.json');
        fs.writeFileSync(configPath, JSON.stringify(config).replaceAll('@RDS@', rdsPath).replaceAll('@MISSING@', path.join(dir, 'missing.json')));
        await assertRefusedAlike(configPath, error);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  }

  test('a good rds block validates', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-rds-ok-'));
    try {
      const rdsPath = path.join(dir, 'rds.json');
      fs.writeFileSync(rdsPath, JSON.stringify({ version_info: '1', resources: [] }));
      const configPath = path.join(dir, 'bootstrap.json');
      fs.writeFileSync(configPath, JSON.stringify(bootstrap({ path: rdsPath }, [cluster])));
      const proc = spawnProxy(['--mode', 'validate', '-c', configPath, '--disable-hot-restart'], { dir: fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-rds-run-')) });
      const exit = await Promise.race([proc.exited, giveUpAfter(30_000).then(() => null)]);
      await proc.cleanup();
      assert.equal(exit?.code, 0, proc.stderr);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
