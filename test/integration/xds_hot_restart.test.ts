// A hot restart under a gRPC management server (ADS carrying CDS and EDS, two workers): the new
// epoch opens its own stream with the node's id, serves the same cluster and endpoints before it
// answers /ready, no request fails while load runs across the restart, and once the parent has
// exited an endpoint change pushed by the server reaches both of the new epoch's workers.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { freePort } from '../../bench/free_port';
import type { JsonObject } from '../../src/config/json';
import { localCluster, routeAllListener } from '../helpers/config_fixtures';
import { HotRestarterRun, runLoad, statsOf } from '../helpers/hot_restart_run';
import { request, waitFor } from '../helpers/proxy_process';
import { namedUpstream, type NamedUpstream } from '../helpers/socket_owner';
import { XdsServer } from '../helpers/xds_server';

const CLUSTER_TYPE = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';
const CLA_TYPE = 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment';
const NODE_ID = 'hot-xds';

function endpoints(upstream: NamedUpstream): JsonObject {
  return {
    '@type': CLA_TYPE,
    cluster_name: 'dyn',
    endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: upstream.port } } } }] }],
  };
}

test('a hot restart under ADS keeps serving; the new epoch resubscribes and follows the server', { timeout: 180_000 }, async (t) => {
  const xds = await XdsServer.start();
  t.after(() => xds.close());
  let workers: number[] = [];
  const [a, b] = await Promise.all(['a', 'b'].map((name) => namedUpstream(name, () => workers)));
  t.after(() => {
    for (const u of [a!, b!]) {
      u.server.closeAllConnections();
      u.server.close();
    }
  });
  xds.setResources(CLUSTER_TYPE, 'c1', [
    { '@type': CLUSTER_TYPE, name: 'dyn', type: 'EDS', connect_timeout: '1s', eds_cluster_config: { eds_config: { ads: {}, resource_api_version: 'V3' } } },
  ]);
  xds.setResources(CLA_TYPE, 'e1', [endpoints(a!)]);

  const httpPort = await freePort();
  const xdsCluster = { ...localCluster('xds', xds.port), http2_protocol_options: {} };
  const run = HotRestarterRun.withBootstrap(
    {
      node: { id: NODE_ID, cluster: 'hot' },
      admin: { access_log_path: '/dev/null', address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      dynamic_resources: {
        cds_config: { ads: {}, resource_api_version: 'V3' },
        ads_config: { api_type: 'GRPC', transport_api_version: 'V3', grpc_services: [{ envoy_grpc: { cluster_name: 'xds' } }] },
      },
      static_resources: {
        listeners: [routeAllListener('http_in', httpPort, 'dyn')],
        clusters: [xdsCluster],
      },
    },
    ['--concurrency', '2', '--drain-time-s', '1', '--parent-shutdown-time-s', '3'],
  );
  t.after(() => run.cleanup());
  const get = async () => {
    const r = await request(`http://127.0.0.1:${httpPort}/`, { headers: { connection: 'close' } });
    return r.status === 200 ? r.body : `status ${r.status}: ${r.body}`;
  };

  const admin0 = await run.adminOf(0);
  const [parent] = run.supervisorPids();
  assert.equal(await get(), 'a');
  const streamsBefore = Math.max(...xds.requests.map((r) => r.stream));

  // Load through the restart: every request is answered by the dynamic cluster's endpoint.
  const load = runLoad(4, get);
  run.signal('SIGHUP');
  const admin1 = await run.adminOf(1, 60_000);
  assert.notEqual(admin1, admin0);
  // The parent serves until its shutdown time: the load runs until it has exited.
  await waitFor('the parent epoch to exit', () => (run.supervisorPids().includes(parent!) ? undefined : true), 30_000);
  const answers = await load.stop();
  t.diagnostic(`${answers.length} requests across the restart`);
  assert.ok(answers.length > 0);
  assert.deepEqual([...new Set(answers)], ['a']);

  // The new epoch opened its own stream, sent the node, and asked for both types on it.
  const fresh = xds.requests.filter((r) => r.stream > streamsBefore);
  assert.ok(fresh.length > 0, 'the new epoch opened no stream');
  assert.equal(new Set(fresh.map((r) => r.stream)).size, 1);
  assert.equal(fresh[0]!.node?.['id'], NODE_ID);
  // It starts from nothing: no version of the parent's carries over.
  assert.equal(fresh[0]!.version_info, '');
  assert.deepEqual(new Set(fresh.map((r) => r.type_url)), new Set([CLUSTER_TYPE, CLA_TYPE]));
  // Both types are ACKed at the server's versions on the new stream.
  for (const [type, version] of [[CLUSTER_TYPE, 'c1'], [CLA_TYPE, 'e1']] as const) {
    assert.ok(fresh.some((r) => r.type_url === type && r.version_info === version && r.response_nonce !== '' && r.error_detail === null), `${type} not ACKed at ${version}`);
  }
  await waitFor('the parent stream to close', () => (xds.openStreams === 1 ? true : undefined));

  // Gauges are this epoch's own; counters carry on from the parent's (one update each).
  const stats = await statsOf(admin1);
  assert.equal(stats.get('control_plane.connected_state'), 1);
  assert.equal(stats.get('cluster_manager.active_clusters'), 2);
  assert.equal(stats.get('cluster_manager.warming_clusters'), 0);
  assert.equal(stats.get('cluster_manager.cds.update_success'), 2);
  assert.equal(stats.get('cluster.dyn.membership_total'), 1);
  const clusters = (await request(`${admin1}/clusters`)).body.split('\n');
  assert.equal(clusters[0], 'version_info::c1');
  assert.ok(clusters.includes('dyn::added_via_api::true'));
  assert.ok(clusters.some((line) => line.startsWith(`dyn::127.0.0.1:${a!.port}::`)), 'dyn lacks its endpoint in /clusters');

  // The server's next endpoints reach both workers of the new epoch.
  const [child] = run.supervisorPids();
  workers = run.workerPids(child!);
  assert.equal(workers.length, 2);
  xds.setResources(CLA_TYPE, 'e2', [endpoints(b!)]);
  await waitFor(
    'both new workers to reach b',
    async () => {
      for (let i = 0; i < 4; i++) await get();
      return workers.every((w) => b!.seen.includes(w)) ? true : undefined;
    },
    30_000,
  );
  assert.equal(await get(), 'b');
});
