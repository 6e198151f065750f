// A hot restart under file-based LDS: the new epoch resubscribes, takes the previous epoch's
// listen socket for the LDS listener's address (as it does a static listener's), and serves it
// before it answers /ready; requests through the restart never fail, and a change after it
// reaches the new epoch. Then the same under LDS, RDS, CDS and EDS at once.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { test } from 'node:test';
import { freePort } from '../../bench/free_port';
import { routeAllListener } from '../helpers/config_fixtures';
import { listen } from '../helpers/http_peers';
import { HotRestarterRun, restartUnderLoad } from '../helpers/hot_restart_run';
import { request, waitFor } from '../helpers/proxy_process';

const LISTENER_TYPE = 'type.googleapis.com/envoy.config.listener.v3.Listener';

function pushLds(ldsPath: string, version: string, port: number, cluster: string): void {
  const resource = { '@type': LISTENER_TYPE, ...routeAllListener('dyn', port, cluster) };
  fs.writeFileSync(`${ldsPath}.tmp`, JSON.stringify({ version_info: version, resources: [resource] }));
  fs.renameSync(`${ldsPath}.tmp`, ldsPath);
}

function staticCluster(name: string, port: number) {
  return {
    name,
    connect_timeout: '1s',
    load_assignment: { cluster_name: name, endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: port } } } }] }] },
  };
}

test('a hot restart under LDS passes the LDS listener its socket; the new epoch resubscribes', { timeout: 90_000 }, async (t) => {
  const upstreams = ['a', 'b'].map((name) => http.createServer((_req, res) => res.end(name)));
  const [portA, portB] = [await listen(upstreams[0]!), await listen(upstreams[1]!)];
  const httpPort = await freePort();
  let ldsPath = '';
  const run = HotRestarterRun.withBootstrap(
    (dir) => {
      ldsPath = path.join(dir, 'lds.json');
      pushLds(ldsPath, 'one', httpPort, 'a');
      return {
        node: { id: 'hot', cluster: 'hot' },
        admin: { access_log_path: '/dev/null', address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
        dynamic_resources: { lds_config: { path: ldsPath, resource_api_version: 'V3' } },
        static_resources: { clusters: [staticCluster('a', portA), staticCluster('b', portB)] },
      };
    },
    ['--concurrency', '2', '--drain-time-s', '1', '--parent-shutdown-time-s', '2'],
  );
  t.after(async () => {
    await run.cleanup();
    for (const u of upstreams) u.close();
  });
  const get = async () => (await request(`http://127.0.0.1:${httpPort}/`, { headers: { connection: 'close' } })).body;

  const admin0 = await run.adminOf(0);
  assert.equal((await request(`${admin0}/listeners`)).body, `dyn::127.0.0.1:${httpPort}\n`);
  assert.equal(await get(), 'a');

  // Requests run through the restart: every one is answered, by one epoch or the other.
  const admin1 = await restartUnderLoad(run, 2, get, 'a');
  assert.equal((await request(`${admin1}/listeners`)).body, `dyn::127.0.0.1:${httpPort}\n`);

  // The new epoch's own subscription follows the file.
  pushLds(ldsPath, 'two', httpPort, 'b');
  await waitFor('the new epoch to serve version two', async () => ((await get()) === 'b' ? true : undefined));
});

/** Writes a DiscoveryResponse file as the path subscriptions want it: aside, then renamed into place. */
function publish(file: string, version: string, resources: object[]): void {
  fs.writeFileSync(`${file}.tmp`, JSON.stringify({ version_info: version, resources }));
  fs.renameSync(`${file}.tmp`, file);
}

const route = (cluster: string) => ({
  '@type': 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration',
  name: 'routes',
  virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster } }] }],
});

const assignment = (port: number) => ({
  '@type': 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment',
  cluster_name: 'svc',
  endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: port } } } }] }],
});

test('a hot restart under LDS, RDS, CDS and EDS together: no request fails, and the new epoch follows each', { timeout: 90_000 }, async (t) => {
  const upstreams = ['a', 'b', 'c'].map((name) => http.createServer((_req, res) => res.end(name)));
  const [portA, portB, portC] = [await listen(upstreams[0]!), await listen(upstreams[1]!), await listen(upstreams[2]!)];
  const httpPort = await freePort();
  const files = { lds: '', rds: '', cds: '', eds: '' };
  const run = HotRestarterRun.withBootstrap(
    (dir) => {
      for (const kind of ['lds', 'rds', 'cds', 'eds'] as const) files[kind] = path.join(dir, `${kind}.json`);
      const source = (file: string) => ({ path: file, resource_api_version: 'V3' });
      publish(files.eds, 'e1', [assignment(portA)]);
      publish(files.rds, 'r1', [route('svc')]);
      publish(files.cds, 'c1', [
        { '@type': 'type.googleapis.com/envoy.config.cluster.v3.Cluster', name: 'svc', type: 'EDS', connect_timeout: '1s', eds_cluster_config: { eds_config: source(files.eds) } },
      ]);
      publish(files.lds, 'l1', [
        {
          '@type': LISTENER_TYPE,
          name: 'dyn',
          address: { socket_address: { address: '127.0.0.1', port_value: httpPort } },
          filter_chains: [
            {
              filters: [
                {
                  name: 'envoy.filters.network.http_connection_manager',
                  typed_config: {
                    '@type': 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
                    stat_prefix: 'dyn',
                    rds: { config_source: source(files.rds), route_config_name: 'routes' },
                    http_filters: [{ name: 'envoy.filters.http.router' }],
                  },
                },
              ],
            },
          ],
        },
      ]);
      return {
        node: { id: 'hot', cluster: 'hot' },
        admin: { access_log_path: '/dev/null', address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
        dynamic_resources: { lds_config: source(files.lds), cds_config: source(files.cds) },
        static_resources: { clusters: [staticCluster('c', portC)] },
      };
    },
    ['--concurrency', '2', '--drain-time-s', '1', '--parent-shutdown-time-s', '2'],
  );
  t.after(async () => {
    await run.cleanup();
    for (const u of upstreams) u.close();
  });
  const get = async () => (await request(`http://127.0.0.1:${httpPort}/`, { headers: { connection: 'close' } })).body;

  await run.adminOf(0);
  assert.equal(await get(), 'a');
  const admin1 = await restartUnderLoad(run, 2, get, 'a');
  assert.equal((await request(`${admin1}/listeners`)).body, `dyn::127.0.0.1:${httpPort}\n`);
  assert.match((await request(`${admin1}/clusters`)).body, /^svc::added_via_api::true$/m);

  // The new epoch's own subscriptions follow the files: EDS, then RDS.
  publish(files.eds, 'e2', [assignment(portB)]);
  await waitFor('the new epoch to follow EDS', async () => ((await get()) === 'b' ? true : undefined));
  publish(files.rds, 'r2', [route('c')]);
  await waitFor('the new epoch to follow RDS', async () => ((await get()) === 'c' ? true : undefined));
});
