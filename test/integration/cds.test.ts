// File-based CDS on a real proxy with two workers: clusters added, changed and removed by
// atomic renames of the CDS file reach GET /clusters, /config_dump, the cluster_manager stats
// and the traffic of both workers without a restart; a malformed file and a bad resource are
// rejected and counted, and what was serving keeps serving. Then CDS and EDS over ADS from a
// gRPC management server the test runs.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DnsTestServer } from '../helpers/dns_test_server';
import { assertRefusedAlike } from '../helpers/cli_runs';
import { request, type RunningProxy, startProxy, waitFor } from '../helpers/proxy_process';
import { httpListener } from '../helpers/config_fixtures';
import { namedUpstream, type NamedUpstream } from '../helpers/socket_owner';
import { XdsServer } from '../helpers/xds_server';
import type { JsonObject } from '../../src/config/json';

const TIMEOUT = { timeout: 120_000 };
const CLUSTER_TYPE = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';
const CLA_TYPE = 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment';


function cluster(name: string, port: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    '@type': CLUSTER_TYPE,
    name,
    connect_timeout: '1s',
    load_assignment: {
      cluster_name: name,
      endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: port } } } }] }],
    },
    ...extra,
  };
}

function bootstrap(cdsPath: string, staticPort: number): Record<string, unknown> {
  const route = (prefix: string, clusterName: string) => ({ match: { prefix }, route: { cluster: clusterName } });
  return {
    node: { id: 'cds-test', cluster: 'cds-test' },
    dynamic_resources: { cds_config: { path: cdsPath } },
    static_resources: {
      listeners: [
        httpListener('in', 0, [], {
          // The routes name clusters CDS brings later.
          route_config: { validate_clusters: false, virtual_hosts: [{ name: 'all', domains: ['*'], routes: [route('/fixed', 'fixed'), route('/other', 'other'), route('/', 'dyn')] }] },
        }),
      ],
      clusters: [cluster('fixed', staticPort)].map(({ '@type': _, ...c }) => c),
    },
  };
}

/** Writes the CDS file aside and renames it into place, as a management script does. */
function pushCds(cdsPath: string, version: string, resources: readonly unknown[] | string): void {
  const aside = `${cdsPath}.${version}.tmp`;
  fs.writeFileSync(aside, typeof resources === 'string' ? resources : JSON.stringify({ version_info: version, resources }));
  fs.renameSync(aside, cdsPath);
}

async function get(port: number, urlPath: string): Promise<{ status: number; body: string }> {
  const r = await request(`http://127.0.0.1:${port}${urlPath}`, { headers: { connection: 'close' } });
  return { status: r.status, body: r.body };
}

/** Requests, each on its own connection, until `upstream` has seen both workers. */
async function untilBothWorkersReach(port: number, upstream: NamedUpstream, workers: readonly number[], what: string): Promise<void> {
  await waitFor(
    what,
    async () => {
      for (let i = 0; i < 4; i++) await get(port, '/');
      return workers.every((w) => upstream.seen.includes(w)) ? true : undefined;
    },
    30_000,
  );
}

describe('file-based CDS with two workers', TIMEOUT, () => {
  let proxy: RunningProxy;
  let upstreamA: NamedUpstream;
  let upstreamB: NamedUpstream;
  let fixed: NamedUpstream;
  let cdsPath: string;
  let listener: number;
  let workers: number[] = [];
  let dns: DnsTestServer;

  before(async () => {
    dns = await DnsTestServer.start();
    upstreamA = await namedUpstream('a', () => workers);
    upstreamB = await namedUpstream('b', () => workers);
    fixed = await namedUpstream('fixed', () => workers);
    cdsPath = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-cds-')), 'cds.json');
    pushCds(cdsPath, '1', [cluster('other', upstreamB.port)]);
    proxy = await startProxy(bootstrap(cdsPath, fixed.port), ['--concurrency', '2']);
    workers = proxy.groupPids().filter((p) => p !== proxy.pid);
    assert.equal(workers.length, 2);
    listener = await proxy.listenerPort('in');
  });

  after(async () => {
    await proxy?.cleanup();
    for (const u of [upstreamA, upstreamB, fixed]) u?.server.close();
    await dns?.close();
    if (cdsPath) fs.rmSync(path.dirname(cdsPath), { recursive: true, force: true });
  });

  test('the first update is in before the proxy serves: /clusters, stats, traffic', async () => {
    const lines = (await proxy.admin('/clusters')).body.split('\n');
    assert.equal(lines[0], 'version_info::1');
    assert.ok(lines.includes('other::added_via_api::true'));
    assert.ok(lines.includes('fixed::added_via_api::false'));
    const json = JSON.parse((await proxy.admin('/clusters?format=json')).body) as { cluster_statuses: { name: string; added_via_api?: boolean }[] };
    assert.equal(json.cluster_statuses.find((c) => c.name === 'other')?.added_via_api, true);
    assert.equal(json.cluster_statuses.find((c) => c.name === 'fixed')?.added_via_api, undefined);
    assert.equal((await get(listener, '/other')).body, 'b');
    assert.equal((await get(listener, '/fixed')).body, 'fixed');
    assert.equal(await proxy.stat('cluster_manager.cluster_added'), 2);
    assert.equal(await proxy.stat('cluster_manager.active_clusters'), 2);
    assert.equal(await proxy.stat('cluster_manager.warming_clusters'), 0);
    assert.equal(await proxy.stat('cluster_manager.cds.update_success'), 1);
  });

  test('a cluster added by a rename: 503 before, then traffic through both workers', async () => {
    assert.equal((await get(listener, '/')).status, 503);
    pushCds(cdsPath, '2', [cluster('other', upstreamB.port), cluster('dyn', upstreamA.port)]);
    await waitFor('dyn in /clusters', async () => ((await proxy.admin('/clusters')).body.includes('dyn::added_via_api::true') ? true : undefined));
    assert.equal((await proxy.admin('/clusters')).body.split('\n')[0], 'version_info::2');
    await untilBothWorkersReach(listener, upstreamA, workers, 'both workers to reach the added cluster');
    assert.equal(await proxy.stat('cluster_manager.cluster_added'), 3);
    assert.equal(await proxy.stat('cluster_manager.active_clusters'), 3);

    const dump = JSON.parse((await proxy.admin('/config_dump?resource=dynamic_active_clusters')).body) as {
      configs: { version_info: string; cluster: { '@type': string; name: string }; last_updated: string }[];
    };
    const dyn = dump.configs.find((c) => c.cluster.name === 'dyn')!;
    assert.equal(dyn.version_info, '2');
    assert.equal(dyn.cluster['@type'], CLUSTER_TYPE);
    assert.match(dyn.last_updated, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const other = dump.configs.find((c) => c.cluster.name === 'other')!;
    assert.equal(other.version_info, '1', 'an unchanged cluster keeps the version that brought it');
    const clustersDump = (JSON.parse((await proxy.admin('/config_dump')).body) as { configs: Record<string, unknown>[] }).configs.find((c) =>
      String(c['@type']).endsWith('ClustersConfigDump'),
    )!;
    assert.equal(clustersDump['version_info'], '2');
    assert.equal((clustersDump['static_clusters'] as unknown[]).length, 1);
    const endpoints = JSON.parse((await proxy.admin('/config_dump?include_eds&resource=static_endpoint_configs')).body) as {
      configs: { endpoint_config: { cluster_name: string } }[];
    };
    assert.deepEqual(endpoints.configs.map((c) => c.endpoint_config.cluster_name).sort(), ['dyn', 'fixed', 'other']);
  });

  test('a changed cluster replaces the old one: traffic moves in both workers', async () => {
    pushCds(cdsPath, '3', [cluster('other', upstreamB.port), cluster('dyn', upstreamB.port)]);
    const before = upstreamB.seen.length;
    await waitFor('dyn to point at b', async () => ((await get(listener, '/')).body === 'b' ? true : undefined));
    await waitFor('both workers to reach b for dyn', async () => {
      for (let i = 0; i < 4; i++) await get(listener, '/');
      return workers.every((w) => upstreamB.seen.slice(before).includes(w)) ? true : undefined;
    }, 30_000);
    const seenA = upstreamA.seen.length;
    for (let i = 0; i < 6; i++) assert.equal((await get(listener, '/')).body, 'b');
    assert.equal(upstreamA.seen.length, seenA, 'no request reaches the old endpoint');
    assert.equal(await proxy.stat('cluster_manager.cluster_modified'), 1);
    assert.equal(await proxy.stat('cluster_manager.active_clusters'), 3);
    assert.match((await proxy.admin('/clusters')).body, /^dyn::127\.0\.0\.1:\d+::cx_active/m);
  });

  test('a malformed file is counted as a failure and the clusters keep serving', async () => {
    const failures = (await proxy.stat('cluster_manager.cds.update_failure')) ?? 0;
    pushCds(cdsPath, '4', '{"version_info": "4", "resources": [');
    await waitFor('update_failure', async () => ((await proxy.stat('cluster_manager.cds.update_failure')) === failures + 1 ? true : undefined));
    assert.equal((await get(listener, '/')).body, 'b');
    assert.equal((await proxy.admin('/clusters')).body.split('\n')[0], 'version_info::3');
  });

  test('an update with a bad resource is rejected; the good ones apply, as in Envoy 1.16', async () => {
    const rejected = (await proxy.stat('cluster_manager.cds.update_rejected')) ?? 0;
    pushCds(cdsPath, '5', [
      cluster('other', upstreamB.port),
      cluster('dyn', upstreamB.port),
      cluster('bad', upstreamA.port, { lb_policy: 'CLUSTER_PROVIDED' }),
      cluster('late', upstreamA.port),
    ]);
    await waitFor('update_rejected', async () => ((await proxy.stat('cluster_manager.cds.update_rejected')) === rejected + 1 ? true : undefined));
    const body = (await proxy.admin('/clusters')).body;
    assert.ok(!body.includes('bad::'), 'the bad cluster is not added');
    await waitFor('late in /clusters', async () => ((await proxy.admin('/clusters')).body.includes('late::added_via_api::true') ? true : undefined));
    assert.equal((await proxy.admin('/clusters')).body.split('\n')[0], 'version_info::5');
    assert.equal((await get(listener, '/')).body, 'b');
    // A cluster added at run time has its stats listed at 0 before any traffic, as a static one.
    await waitFor('cluster.late.* declared', async () => ((await proxy.stat('cluster.late.upstream_rq_retry')) === 0 ? true : undefined));
  });

  test('a static cluster is never replaced by a CDS resource of its name', async () => {
    pushCds(cdsPath, '6', [cluster('other', upstreamB.port), cluster('dyn', upstreamB.port), cluster('late', upstreamA.port), cluster('fixed', upstreamA.port)]);
    await waitFor('version 6 accepted', async () => ((await proxy.stat('cluster_manager.cds.update_success')) === 4 ? true : undefined));
    for (let i = 0; i < 4; i++) assert.equal((await get(listener, '/fixed')).body, 'fixed');
    assert.ok((await proxy.admin('/clusters')).body.split('\n').includes('fixed::added_via_api::false'));
  });

  test('a removed cluster: 503, gone from /clusters, counted', async () => {
    pushCds(cdsPath, '7', [cluster('other', upstreamB.port)]);
    await waitFor('dyn gone from /clusters', async () => (!(await proxy.admin('/clusters')).body.includes('dyn::') ? true : undefined));
    assert.equal((await proxy.admin('/clusters')).body.split('\n')[0], 'version_info::7');
    // Both workers have dropped it once every request of a few connections gets 503.
    await waitFor('503 from both workers', async () => {
      const statuses = await Promise.all(Array.from({ length: 6 }, () => get(listener, '/')));
      return statuses.every((r) => r.status === 503) ? true : undefined;
    });
    assert.equal(await proxy.stat('cluster_manager.cluster_removed'), 2);
    assert.equal(await proxy.stat('cluster_manager.active_clusters'), 2);
    assert.equal((await get(listener, '/other')).body, 'b');
  });

  test('a worker restarted after the changes starts with the current CDS clusters', async () => {
    pushCds(cdsPath, '8', [cluster('other', upstreamB.port), cluster('dyn', upstreamA.port)]);
    await waitFor('dyn back', async () => ((await get(listener, '/')).body === 'a' ? true : undefined));
    process.kill(workers[0]!, 'SIGKILL');
    const replacement = await waitFor('the replacement worker', () => {
      const now = proxy.groupPids().filter((p) => p !== proxy.pid && !workers.includes(p));
      return now.length === 1 ? now[0] : undefined;
    });
    workers = [workers[1]!, replacement];
    await untilBothWorkersReach(listener, upstreamA, [replacement], 'the replacement worker to reach dyn');
  });

  test('a changed cluster warms until its first DNS answer while the old one serves', async () => {
    dns.zone.set('dyn.test', { a: [{ address: '127.0.0.1', ttl: 60 }], hold: true });
    const dnsCluster = cluster('dyn', upstreamB.port, {
      type: 'STRICT_DNS',
      dns_lookup_family: 'V4_ONLY',
      dns_resolvers: [{ socket_address: { address: '127.0.0.1', port_value: dns.port } }],
      load_assignment: {
        cluster_name: 'dyn',
        endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: 'dyn.test', port_value: upstreamB.port } } } }] }],
      },
    });
    pushCds(cdsPath, '9', [cluster('other', upstreamB.port), dnsCluster]);
    await waitFor('the DNS query of the warming cluster', () => (dns.count('dyn.test') > 0 ? true : undefined));
    assert.equal(await proxy.stat('cluster_manager.warming_clusters'), 1);
    const warming = JSON.parse((await proxy.admin('/config_dump?resource=dynamic_warming_clusters')).body) as {
      configs: { version_info: string; cluster: { name: string; type: string } }[];
    };
    assert.deepEqual(warming.configs.map((c) => [c.cluster.name, c.cluster.type, c.version_info]), [['dyn', 'STRICT_DNS', '9']]);
    for (let i = 0; i < 4; i++) assert.equal((await get(listener, '/')).body, 'a', 'the old cluster serves while the new one warms');
    assert.match((await proxy.admin('/clusters')).body, /^dyn::127\.0\.0\.1:\d+::hostname::$/m);

    dns.zone.get('dyn.test')!.hold = false;
    dns.release();
    await waitFor('the warmed cluster to serve', async () => ((await get(listener, '/')).body === 'b' ? true : undefined));
    assert.equal(await proxy.stat('cluster_manager.warming_clusters'), 0);
    assert.match((await proxy.admin('/clusters')).body, /^dyn::127\.0\.0\.1:\d+::hostname::dyn\.test$/m);
    assert.equal((JSON.parse((await proxy.admin('/config_dump?resource=dynamic_warming_clusters')).body) as { configs?: unknown[] }).configs, undefined);
  });
});

describe('a CDS cluster removed with a request in flight', TIMEOUT, () => {
  test('the request finishes on its connection, which then closes; new requests get 503', async () => {
    const held: http.ServerResponse[] = [];
    let closedConnections = 0;
    const slow = http.createServer((_req, res) => held.push(res));
    slow.on('connection', (socket: net.Socket) => socket.on('close', () => closedConnections++));
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    const slowPort = (slow.address() as net.AddressInfo).port;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-cds-'));
    const cdsPath = path.join(dir, 'cds.json');
    pushCds(cdsPath, '1', [cluster('dyn', slowPort)]);
    const proxy = await startProxy(bootstrap(cdsPath, slowPort), ['--concurrency', '2']);
    try {
      const listener = await proxy.listenerPort('in');
      const inFlight = get(listener, '/');
      await waitFor('the request to reach the upstream', () => (held.length === 1 ? true : undefined));
      pushCds(cdsPath, '2', []);
      await waitFor('dyn gone from /clusters', async () => (!(await proxy.admin('/clusters')).body.includes('dyn::') ? true : undefined));
      await waitFor('503 for new requests', async () => ((await get(listener, '/')).status === 503 ? true : undefined));
      assert.equal(closedConnections, 0, 'the busy connection stays open while its request is in flight');
      held[0]!.end('late');
      assert.deepEqual(await inFlight, { status: 200, body: 'late' });
      await waitFor('the drained connection to close', () => (closedConnections === 1 ? true : undefined));
    } finally {
      await proxy.cleanup();
      slow.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('CDS and EDS preconditions, in --mode validate as when serving', TIMEOUT, () => {
  const cases: ReadonlyArray<[string, Record<string, unknown>, RegExp]> = [
    ['a node without id and cluster', { dynamic_resources: { cds_config: { path: '@CDS@' } } }, /dynamic_resources\.cds_config: type\.googleapis\.com\/envoy\.api\.v2\.Cluster: node 'id' and 'cluster' are required/],
    ['a CDS file that does not exist', { node: { id: 'n', cluster: 'c' }, dynamic_resources: { cds_config: { path: '@MISSING@' } } }, /dynamic_resources\.cds_config\.path: paths must refer to an existing path in the system: '.*missing\.json' does not exist/],
    [
      'an EDS file that does not exist',
      { static_resources: { clusters: [{ name: 'e', type: 'EDS', connect_timeout: '1s', eds_cluster_config: { eds_config: { path: '@MISSING@' } } }] } },
      /static_resources\.clusters\[0\]\.eds_cluster_config\.eds_config\.path: paths must refer to an existing path in the system: '.*missing\.json' does not exist/,
    ],
    ['an ADS source without ads_config', { node: { id: 'n', cluster: 'c' }, dynamic_resources: { cds_config: { ads: {} } } }, /dynamic_resources\.cds_config\.ads: ADS must be configured to support an ADS config source/],
    ['an LDS source with a node without id and cluster', { dynamic_resources: { lds_config: { path: '@CDS@' } } }, /dynamic_resources\.lds_config: type\.googleapis\.com\/envoy\.api\.v2\.Listener: node 'id' and 'cluster' are required/],
    ['an LDS file that does not exist', { node: { id: 'n', cluster: 'c' }, dynamic_resources: { lds_config: { path: '@MISSING@' } } }, /dynamic_resources\.lds_config\.path: paths must refer to an existing path in the system/],
    ['an LDS ADS source without ads_config', { node: { id: 'n', cluster: 'c' }, dynamic_resources: { lds_config: { ads: {} } } }, /dynamic_resources\.lds_config\.ads: ADS must be configured to support an ADS config source/],
  ];
  for (const [what, config, error] of cases) {
    test(`${what} is refused with exit 1, for validate and serve alike`, async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-cds-pre-'));
      try {
        const cdsPath = path.join(dir, 'cds.json');
        fs.writeFileSync(cdsPath, JSON.stringify({ version_info: '1', resources: [] }));
        const configPath = path.join(dir, 'bootstrap.json');
        fs.writeFileSync(configPath, JSON.stringify(config).replaceAll('@CDS@', cdsPath).replaceAll('@MISSING@', path.join(dir, 'missing.json')));
        await assertRefusedAlike(configPath, error);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});

/** bootstrap() with CDS over ADS from `xds` (its static cluster `xds`) instead of a file. */
function adsBootstrap(xds: XdsServer, staticPort: number): Record<string, unknown> {
  const config = bootstrap('', staticPort) as { dynamic_resources: unknown; static_resources: { clusters: unknown[] } };
  config.dynamic_resources = {
    cds_config: { ads: {}, resource_api_version: 'V3' },
    ads_config: { api_type: 'GRPC', transport_api_version: 'V3', grpc_services: [{ envoy_grpc: { cluster_name: 'xds' } }] },
  };
  config.static_resources.clusters.push({
    name: 'xds',
    connect_timeout: '1s',
    http2_protocol_options: {},
    load_assignment: { cluster_name: 'xds', endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: xds.port } } } }] }] },
  });
  return config;
}

describe('CDS and EDS over ADS from a gRPC management server, two workers', TIMEOUT, () => {
  test('a cluster appears with its endpoints, changes and disappears with no restart; a bad cluster is NACKed and the rest serves', async (t) => {
    const xds = await XdsServer.start();
    t.after(() => xds.close());
    let workers: number[] = [];
    const [a, b, fixed] = await Promise.all(['a', 'b', 'fixed'].map((name) => namedUpstream(name, () => workers)));
    t.after(() => {
      for (const u of [a, b, fixed]) u!.server.close();
    });
    const edsCluster = { '@type': CLUSTER_TYPE, name: 'dyn', type: 'EDS', connect_timeout: '1s', eds_cluster_config: { eds_config: { ads: {}, resource_api_version: 'V3' } } };
    const endpoints = (u: NamedUpstream): JsonObject => ({
      '@type': CLA_TYPE,
      cluster_name: 'dyn',
      endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: u.port } } } }] }],
    });
    xds.setResources(CLUSTER_TYPE, 'c1', [edsCluster]);
    xds.setResources(CLA_TYPE, 'e1', [endpoints(a!)]);
    const proxy = await startProxy(adsBootstrap(xds, fixed!.port), ['--concurrency', '2']);
    t.after(() => proxy.cleanup());
    workers = proxy.groupPids().filter((p) => p !== proxy.pid);
    const listener = await proxy.listenerPort('in');
    assert.match((await proxy.admin('/clusters')).body, /^version_info::c1$/m);
    assert.match((await proxy.admin('/clusters')).body, /^dyn::added_via_api::true$/m);
    await untilBothWorkersReach(listener, a!, workers, 'both workers to reach a');
    // One stream carries both types.
    assert.deepEqual(new Set(xds.requests.map((r) => r.path)), new Set(['/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources']));
    // The node names this build as Envoy's does: user agent, build version and extensions.
    const node = xds.requests[0]!.node!;
    assert.equal(node.user_agent_name, 'proxy');
    // A google.protobuf.Struct, as the server decodes it.
    const buildVersion = node.user_agent_build_version as { metadata: { fields: Record<string, unknown> } };
    assert.deepEqual(Object.keys(buildVersion.metadata.fields).sort(), ['build.type', 'revision.sha', 'revision.status', 'ssl.version']);
    const extensions = node.extensions as { name: string; category: string; disabled: boolean }[];
    assert.ok(extensions.some((e) => e.name === 'proxy.filters.network.tcp_proxy' && e.category === 'proxy.filters.network' && !e.disabled), JSON.stringify(extensions));

    xds.setResources(CLA_TYPE, 'e2', [endpoints(b!)]);
    await untilBothWorkersReach(listener, b!, workers, 'both workers to reach b');

    // A second cluster with a bad field: NACKed with its path; dyn keeps serving.
    xds.setResources(CLUSTER_TYPE, 'c2', [edsCluster, { ...edsCluster, name: 'bad', connect_timeout: '-1s' }]);
    const nack = await waitFor('the CDS NACK', () => xds.requests.find((r) => r.type_url === CLUSTER_TYPE && r.error_detail !== null));
    assert.match(nack.error_detail!.message, /connect_timeout/);
    assert.equal((await get(listener, '/')).body, 'b');

    // Removed: 503 in both workers, gone from /clusters.
    xds.setResources(CLUSTER_TYPE, 'c3', []);
    await waitFor('dyn to leave /clusters', async () => (/^dyn::/m.test((await proxy.admin('/clusters')).body) ? undefined : true));
    await waitFor('both workers to answer 503', async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await get(listener, '/')).status);
      return statuses.every((s) => s === 503) ? true : undefined;
    });
    assert.equal(await proxy.stat('cluster_manager.cluster_removed'), 1);
  });
});

describe('--disable-extensions applies to CDS clusters', TIMEOUT, () => {
  test('a cluster using a disabled transport socket is NACKed with its field path; what served keeps serving', async (t) => {
    const xds = await XdsServer.start();
    t.after(() => xds.close());
    const [a, fixed] = await Promise.all(['a', 'fixed'].map((name) => namedUpstream(name, () => [])));
    t.after(() => {
      for (const u of [a, fixed]) u!.server.close();
    });
    xds.setResources(CLUSTER_TYPE, 'c1', [cluster('dyn', a!.port) as JsonObject]);
    const proxy = await startProxy(adsBootstrap(xds, fixed!.port), ['--disable-extensions', 'envoy.transport_sockets.upstream/envoy.transport_sockets.tls']);
    t.after(() => proxy.cleanup());
    const listener = await proxy.listenerPort('in');
    assert.equal((await get(listener, '/')).body, 'a');

    const tls = { name: 'envoy.transport_sockets.tls', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext', sni: 'a' } };
    xds.setResources(CLUSTER_TYPE, 'c2', [cluster('dyn', a!.port), cluster('secure', a!.port, { transport_socket: tls })] as JsonObject[]);
    const nack = await waitFor('the CDS NACK', () => xds.requests.find((r) => r.type_url === CLUSTER_TYPE && r.error_detail !== null));
    assert.equal(nack.version_info, 'c1');
    assert.match(nack.error_detail!.message, /secure: resources\[1\]\.transport_socket\.name: .*'proxy\.transport_sockets\.tls' \(disabled by --disable-extensions\)/);
    assert.equal(await proxy.stat('cluster_manager.cds.update_rejected'), 1);
    const clusters = (await proxy.admin('/clusters')).body;
    assert.doesNotMatch(clusters, /^secure::/m);
    assert.match(clusters, /^version_info::c1$/m);
    assert.equal((await get(listener, '/')).body, 'a');
  });
});

describe('a large CDS update', TIMEOUT, () => {
  test('admin answers while 2,000 clusters are being applied; the update counts as one success once all are in', async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-cds-'));
    const cdsPath = path.join(dir, 'cds.json');
    pushCds(cdsPath, '1', []);
    const proxy = await startProxy(bootstrap(cdsPath, 1), ['--concurrency', '1']);
    t.after(async () => {
      await proxy.cleanup();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    const count = 2000;
    const stats = async () => {
      const body = (await proxy.admin(`/stats?format=json&filter=${encodeURIComponent('^cluster_manager\\.(cluster_added|cds\\.update_success)$')}`)).body;
      const values = new Map((JSON.parse(body) as { stats: { name: string; value: number }[] }).stats.map((s) => [s.name, s.value]));
      return { added: values.get('cluster_manager.cluster_added')!, successes: values.get('cluster_manager.cds.update_success')! };
    };
    const before = await stats();
    assert.deepEqual(before, { added: 1, successes: 1 });

    pushCds(cdsPath, '2', Array.from({ length: count }, (_, i) => cluster(`c${i}`, 1)));
    const seen: Array<{ added: number; successes: number }> = [];
    await waitFor(
      'the update to be applied',
      async () => {
        const now = await stats();
        seen.push(now);
        return now.successes === 2 ? true : undefined;
      },
      120_000,
    );
    // The admin answered between the update's slices: some of its clusters in, the update not yet answered.
    const midway = seen.filter((s) => s.added > 1 && s.added < 1 + count);
    assert.ok(midway.length > 0, `no answer during the update: ${JSON.stringify(seen)}`);
    assert.ok(midway.every((s) => s.successes === 1));
    assert.deepEqual(seen.at(-1), { added: 1 + count, successes: 2 });
    assert.equal(await proxy.stat('cluster_manager.active_clusters'), 1 + count);
    assert.match((await proxy.admin('/clusters')).body, /^version_info::2$/m);
  });
});
