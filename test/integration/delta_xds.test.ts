// Delta xDS (DELTA_GRPC) on a real proxy with two workers, from the test management server:
// CDS and EDS each on a delta stream of its own, then both over delta ADS. Clusters are added,
// endpoints changed and clusters removed (removed_resources) with no restart, and the traffic of
// both workers follows; a bad cluster or assignment is NACKed with its field path while the rest
// keeps serving; a removed assignment leaves the hosts (update_empty); a dropped stream comes back stating what it holds (initial_resource_versions); the
// statistics show in /stats and /stats/prometheus; --mode validate agrees with serving.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import type { JsonObject } from '../../src/config/json';
import { versionHash } from '../../src/config/xds/version_hash';
import { httpListener } from '../helpers/config_fixtures';
import { assertRefusedAlike, runToExit } from '../helpers/cli_runs';
import { makeTempDir, request, startProxy, waitFor } from '../helpers/proxy_process';
import { namedUpstream, type NamedUpstream } from '../helpers/socket_owner';
import { XdsServer } from '../helpers/xds_server';

const TIMEOUT = { timeout: 120_000 };
const CLUSTER_TYPE = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';
const CLA_TYPE = 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment';

/** The management server as a config source: delta, V3, through the static cluster `xds`. */
const DELTA_API = { api_type: 'DELTA_GRPC', transport_api_version: 'V3', grpc_services: [{ envoy_grpc: { cluster_name: 'xds' } }] };

function address(port: number): JsonObject {
  return { socket_address: { address: '127.0.0.1', port_value: port } };
}

function staticCluster(name: string, port: number): JsonObject {
  return {
    '@type': CLUSTER_TYPE,
    name,
    connect_timeout: '1s',
    load_assignment: { cluster_name: name, endpoints: [{ lb_endpoints: [{ endpoint: { address: address(port) } }] }] },
  };
}

function edsCluster(name: string, edsConfig: JsonObject): JsonObject {
  return { '@type': CLUSTER_TYPE, name, type: 'EDS', connect_timeout: '1s', eds_cluster_config: { eds_config: edsConfig } };
}

function endpoints(cluster: string, u: NamedUpstream): JsonObject {
  return { '@type': CLA_TYPE, cluster_name: cluster, endpoints: [{ lb_endpoints: [{ endpoint: { address: address(u.port) } }] }] };
}

/** Routes `/two` to `two` and the rest to `dyn`, clusters CDS brings; the management server is the static cluster `xds`. */
function bootstrap(xdsPort: number, dynamicResources: JsonObject): Record<string, unknown> {
  const route = (prefix: string, cluster: string) => ({ match: { prefix }, route: { cluster } });
  const { '@type': _, ...xdsCluster } = staticCluster('xds', xdsPort);
  return {
    node: { id: 'delta-test', cluster: 'delta-test' },
    dynamic_resources: dynamicResources,
    static_resources: {
      listeners: [
        httpListener('in', 0, [], {
          route_config: { validate_clusters: false, virtual_hosts: [{ name: 'all', domains: ['*'], routes: [route('/two', 'two'), route('/', 'dyn')] }] },
        }),
      ],
      clusters: [{ ...xdsCluster, http2_protocol_options: {} }],
    },
  };
}

async function get(port: number, urlPath: string): Promise<{ status: number; body: string }> {
  const r = await request(`http://127.0.0.1:${port}${urlPath}`, { headers: { connection: 'close' } });
  return { status: r.status, body: r.body };
}

/** Requests, each on its own connection, until `upstream` has seen both workers. */
async function untilBothWorkersReach(port: number, urlPath: string, upstream: NamedUpstream, workers: readonly number[]): Promise<void> {
  await waitFor(
    `both workers to reach ${upstream.name} at ${urlPath}`,
    async () => {
      for (let i = 0; i < 4; i++) await get(port, urlPath);
      return workers.every((w) => upstream.seen.includes(w)) ? true : undefined;
    },
    30_000,
  );
}

async function untilAll503(port: number, urlPath: string): Promise<void> {
  await waitFor(`${urlPath} to answer 503 in both workers`, async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await get(port, urlPath)).status);
    return statuses.every((s) => s === 503) ? true : undefined;
  });
}

describe('delta xDS with two workers', TIMEOUT, () => {
  test('CDS and EDS on delta streams of their own: added, changed, NACKed with the path, removed; stats and config_dump', async (t) => {
    const xds = await XdsServer.start();
    t.after(() => xds.close());
    let workers: number[] = [];
    const [a, b] = await Promise.all(['a', 'b'].map((name) => namedUpstream(name, () => workers)));
    t.after(() => {
      for (const u of [a, b]) u!.server.close();
    });
    const dyn = edsCluster('dyn', { resource_api_version: 'V3', api_config_source: DELTA_API });
    xds.setResources(CLUSTER_TYPE, 'c1', [dyn]);
    xds.setResources(CLA_TYPE, 'e1', [endpoints('dyn', a!)]);
    const proxy = await startProxy(bootstrap(xds.port, { cds_config: { resource_api_version: 'V3', api_config_source: DELTA_API } }), ['--concurrency', '2']);
    t.after(() => proxy.cleanup());
    workers = proxy.groupPids().filter((p) => p !== proxy.pid);
    assert.equal(workers.length, 2);
    const listener = await proxy.listenerPort('in');
    assert.match((await proxy.admin('/clusters')).body, /^version_info::c1$/m);
    assert.match((await proxy.admin('/clusters')).body, /^dyn::added_via_api::true$/m);
    await untilBothWorkersReach(listener, '/', a!, workers);
    const cdsFirst = xds.delta.requests.find((r) => r.type_url === CLUSTER_TYPE)!;
    assert.equal(cdsFirst.path, '/envoy.service.cluster.v3.ClusterDiscoveryService/DeltaClusters');
    assert.deepEqual(cdsFirst.resource_names_subscribe, []);
    const edsFirst = xds.delta.requests.find((r) => r.type_url === CLA_TYPE)!;
    assert.equal(edsFirst.path, '/envoy.service.endpoint.v3.EndpointDiscoveryService/DeltaEndpoints');
    assert.deepEqual(edsFirst.resource_names_subscribe, ['dyn']);
    assert.equal(edsFirst.node?.['id'], 'delta-test');

    // An endpoint changes.
    xds.setResources(CLA_TYPE, 'e2', [endpoints('dyn', b!)]);
    await untilBothWorkersReach(listener, '/', b!, workers);

    // A bad assignment: NACKed with the field path; b keeps serving.
    const zeroWeight = endpoints('dyn', a!);
    ((zeroWeight['endpoints'] as JsonObject[])[0]!['lb_endpoints'] as JsonObject[])[0]!['load_balancing_weight'] = 0;
    xds.setResources(CLA_TYPE, 'e3', [zeroWeight]);
    const edsNack = await waitFor('the EDS NACK', () => xds.delta.requests.find((r) => r.type_url === CLA_TYPE && r.error_detail !== null));
    assert.match(edsNack.error_detail!.message, /endpoints\[0\]\.lb_endpoints\[0\]\.load_balancing_weight/);
    assert.equal(await proxy.stat('cluster.dyn.update_rejected'), 1);
    assert.deepEqual(new Set((await Promise.all([1, 2, 3, 4].map(() => get(listener, '/')))).map((r) => r.body)), new Set(['b']));

    // A cluster is added: only it travels.
    xds.setResources(CLUSTER_TYPE, 'c2', [dyn, staticCluster('two', a!.port)]);
    await waitFor('the c2 ACK', () => xds.delta.requests.find((r) => r.response_nonce === xds.delta.responses.find((s) => s.system_version_info === 'c2')?.nonce));
    assert.deepEqual(xds.delta.responses.find((s) => s.system_version_info === 'c2')!.resources, [{ name: 'two', version: 'c2' }]);
    a!.seen.length = 0;
    await untilBothWorkersReach(listener, '/two', a!, workers);

    // A bad cluster: NACKed with its path in the response; what serves keeps serving.
    xds.setResources(CLUSTER_TYPE, 'c3', [dyn, staticCluster('two', a!.port), { ...staticCluster('bad', a!.port), connect_timeout: '-1s' }]);
    const nack = await waitFor('the CDS NACK', () => xds.delta.requests.find((r) => r.type_url === CLUSTER_TYPE && r.error_detail !== null));
    assert.equal(nack.error_detail!.code, 13);
    assert.match(nack.error_detail!.message, /\bresources\[0\]\.resource\.connect_timeout: /);
    assert.equal(await proxy.stat('cluster_manager.cds.update_rejected'), 1);
    assert.doesNotMatch((await proxy.admin('/clusters')).body, /^bad::/m);
    assert.equal((await get(listener, '/')).body, 'b');
    assert.equal((await get(listener, '/two')).body, 'a');

    // A cluster with a version of its own, which /config_dump shows; /clusters shows the system version.
    xds.delta.sendResponse(CLUSTER_TYPE, 'c4', [{ name: 'three', version: 'three-v7', resource: staticCluster('three', b!.port) }]);
    await waitFor('three in /clusters', async () => (/^three::added_via_api::true$/m.test((await proxy.admin('/clusters')).body) ? true : undefined));
    assert.match((await proxy.admin('/clusters')).body, /^version_info::c4$/m);
    const dump = JSON.parse((await proxy.admin('/config_dump?resource=dynamic_active_clusters')).body) as { configs: { version_info: string; cluster: { name: string } }[] };
    const versions = Object.fromEntries(dump.configs.map((c) => [c.cluster.name, c.version_info]));
    assert.deepEqual(versions, { dyn: 'c1', two: 'c2', three: 'three-v7' });

    // Removed through removed_resources: 503 in both workers, gone from /clusters.
    xds.setResources(CLUSTER_TYPE, 'c5', [dyn]);
    await waitFor('two to leave /clusters', async () => (/^two::/m.test((await proxy.admin('/clusters')).body) ? undefined : true));
    assert.ok(xds.delta.responses.find((s) => s.system_version_info === 'c5')!.removed_resources.includes('two'));
    await untilAll503(listener, '/two');
    assert.equal((await get(listener, '/')).body, 'b');
    // three was never the server's: it stays (delta removes only what it names).
    assert.match((await proxy.admin('/clusters')).body, /^three::added_via_api::true$/m);

    assert.equal(await proxy.stat('cluster_manager.cds.update_success'), 4);
    assert.equal(await proxy.stat('cluster_manager.cds.update_rejected'), 1);
    assert.equal(await proxy.stat('cluster_manager.cds.version'), versionHash('c5'));
    assert.equal(await proxy.stat('cluster_manager.cluster_removed'), 1);
    assert.equal(await proxy.stat('cluster.dyn.update_success'), 2);
    const prometheus = (await proxy.admin('/stats/prometheus')).body;
    assert.match(prometheus, /^proxy_cluster_manager_cds_update_success\{\} 4$/m);
    assert.match(prometheus, /^proxy_cluster_manager_cds_update_rejected\{\} 1$/m);
    assert.match(prometheus, /^proxy_cluster_update_success\{proxy_cluster_name="dyn"\} 2$/m);
    assert.match(prometheus, /^proxy_control_plane_connected_state\{\} 1$/m);
  });

  test('CDS and EDS over delta ADS: one stream; a dropped stream comes back with initial_resource_versions; a cluster removed', async (t) => {
    const xds = await XdsServer.start();
    t.after(() => xds.close());
    let workers: number[] = [];
    const [a, b] = await Promise.all(['a', 'b'].map((name) => namedUpstream(name, () => workers)));
    t.after(() => {
      for (const u of [a, b]) u!.server.close();
    });
    const dyn = edsCluster('dyn', { ads: {}, resource_api_version: 'V3' });
    xds.setResources(CLUSTER_TYPE, 'c1', [dyn]);
    xds.setResources(CLA_TYPE, 'e1', [endpoints('dyn', a!)]);
    const dynamicResources = { cds_config: { ads: {}, resource_api_version: 'V3' }, ads_config: DELTA_API };
    const proxy = await startProxy(bootstrap(xds.port, dynamicResources), ['--concurrency', '2']);
    t.after(() => proxy.cleanup());
    workers = proxy.groupPids().filter((p) => p !== proxy.pid);
    const listener = await proxy.listenerPort('in');
    await untilBothWorkersReach(listener, '/', a!, workers);
    assert.deepEqual(new Set(xds.delta.requests.map((r) => r.path)), new Set(['/envoy.service.discovery.v3.AggregatedDiscoveryService/DeltaAggregatedResources']));
    assert.deepEqual(new Set(xds.delta.requests.map((r) => r.stream)), new Set([1]));

    xds.setResources(CLA_TYPE, 'e2', [endpoints('dyn', b!)]);
    await untilBothWorkersReach(listener, '/', b!, workers);

    // The stream drops: traffic goes on; the new stream says what it holds, and is sent nothing again.
    xds.dropStreams();
    const cdsAgain = await waitFor('the CDS resubscription', () => xds.delta.requests.find((r) => r.stream === 2 && r.type_url === CLUSTER_TYPE));
    assert.deepEqual(cdsAgain.resource_names_subscribe, []);
    assert.deepEqual(cdsAgain.initial_resource_versions, { dyn: 'c1' });
    const edsAgain = await waitFor('the EDS resubscription', () => xds.delta.requests.find((r) => r.stream === 2 && r.type_url === CLA_TYPE));
    assert.deepEqual(edsAgain.resource_names_subscribe, ['dyn']);
    assert.deepEqual(edsAgain.initial_resource_versions, { dyn: 'e2' });
    await waitFor('connected again', async () => ((await proxy.stat('control_plane.connected_state')) === 1 ? true : undefined));
    assert.deepEqual(new Set((await Promise.all([1, 2, 3, 4].map(() => get(listener, '/')))).map((r) => r.body)), new Set(['b']));
    assert.ok(xds.delta.responses.filter((s) => s.stream === 2).every((s) => s.resources.length === 0 && s.removed_resources.length === 0));

    // The assignment is removed: EDS is handed none, counts update_empty and keeps its hosts.
    xds.setResources(CLA_TYPE, 'e3', []);
    await waitFor('update_empty', async () => ((await proxy.stat('cluster.dyn.update_empty')) === 1 ? true : undefined));
    assert.deepEqual(xds.delta.responses.at(-1)!.removed_resources, ['dyn']);
    assert.equal((await get(listener, '/')).body, 'b');

    // The cluster is removed (removed_resources on the new stream): 503 in both workers.
    xds.setResources(CLUSTER_TYPE, 'c2', []);
    await untilAll503(listener, '/');
    assert.deepEqual(xds.delta.responses.at(-1)!.removed_resources, ['dyn']);
    assert.equal(await proxy.stat('cluster_manager.cluster_removed'), 1);
    assert.ok((await proxy.stat('cluster_manager.cds.update_failure'))! >= 1);
  });
});

describe('DELTA_GRPC in --mode validate as when serving', TIMEOUT, () => {
  const service = { envoy_grpc: { cluster_name: 'xds' } };
  /** A bootstrap of `dynamicResources` in a file of `dir`. Port 1: validation connects nowhere, and a refused configuration never serves. */
  const writeBootstrap = (dynamicResources: JsonObject, dir: string): string => {
    const configPath = path.join(dir, 'bootstrap.json');
    fs.writeFileSync(configPath, JSON.stringify(bootstrap(1, dynamicResources)));
    return configPath;
  };

  test('validate accepts DELTA_GRPC for ads_config and for a config source (serving it is the tests above)', async () => {
    const accepted: JsonObject[] = [
      { cds_config: { ads: {} }, ads_config: { api_type: 'DELTA_GRPC', transport_api_version: 'V3', grpc_services: [service] } },
      { cds_config: { api_config_source: { api_type: 'DELTA_GRPC', transport_api_version: 'V2', grpc_services: [service] } } },
    ];
    const dir = makeTempDir();
    try {
      for (const dynamicResources of accepted) {
        const result = await runToExit(['--mode', 'validate', '-c', writeBootstrap(dynamicResources, dir)]);
        assert.equal(result.code, 0, result.stderr);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  const refused: ReadonlyArray<[string, JsonObject, RegExp]> = [
    [
      // Came after Envoy 1.16, which knows no such gRPC type (the capability check refuses it too).
      'AGGREGATED_DELTA_GRPC',
      { cds_config: { api_config_source: { api_type: 'AGGREGATED_DELTA_GRPC', grpc_services: [service] } } },
      /dynamic_resources\.cds_config\.api_config_source\.grpc_services: ApiConfigSource, if not a gRPC type, must not have a gRPC service specified/,
    ],
    [
      'DELTA_GRPC with a cluster name',
      { cds_config: { api_config_source: { api_type: 'DELTA_GRPC', cluster_names: ['xds'], grpc_services: [service] } } },
      /dynamic_resources\.cds_config\.api_config_source\.cluster_names: ApiConfigSource::\(DELTA_\)GRPC must not have a cluster name specified/,
    ],
    [
      'DELTA_GRPC with rate_limit_settings',
      { cds_config: { ads: {} }, ads_config: { api_type: 'DELTA_GRPC', grpc_services: [service], rate_limit_settings: {} } },
      /dynamic_resources\.ads_config\.rate_limit_settings/,
    ],
  ];
  for (const [what, dynamicResources, error] of refused) {
    test(`${what} is refused by path with exit 1, for validate and serve alike`, async () => {
      const dir = makeTempDir();
      try {
        await assertRefusedAlike(writeBootstrap(dynamicResources, dir), error);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
