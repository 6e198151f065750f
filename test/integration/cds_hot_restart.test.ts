// A hot restart under file-based CDS: the new epoch builds its own subscription, reads the file
// at start, and serves the CDS cluster before it answers /ready; the route keeps working across
// the restart, and a change after it reaches the new epoch.

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

const CLUSTER_TYPE = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';

function pushCds(cdsPath: string, version: string, port: number): void {
  const resource = {
    '@type': CLUSTER_TYPE,
    name: 'dyn',
    connect_timeout: '1s',
    load_assignment: { cluster_name: 'dyn', endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: port } } } }] }] },
  };
  fs.writeFileSync(`${cdsPath}.tmp`, JSON.stringify({ version_info: version, resources: [resource] }));
  fs.renameSync(`${cdsPath}.tmp`, cdsPath);
}

test('a hot restart under CDS keeps serving the CDS cluster; the new epoch resubscribes', { timeout: 90_000 }, async (t) => {
  const upstreams = ['a', 'b'].map((name) => http.createServer((_req, res) => res.end(name)));
  const [portA, portB] = [await listen(upstreams[0]!), await listen(upstreams[1]!)];
  const httpPort = await freePort();
  let cdsPath = '';
  const run = HotRestarterRun.withBootstrap(
    (dir) => {
      cdsPath = path.join(dir, 'cds.json');
      pushCds(cdsPath, 'one', portA);
      return {
        node: { id: 'hot', cluster: 'hot' },
        admin: { access_log_path: '/dev/null', address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
        dynamic_resources: { cds_config: { path: cdsPath } },
        static_resources: { listeners: [routeAllListener('http_in', httpPort, 'dyn')] },
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
  assert.equal((await request(`${admin0}/clusters`)).body.split('\n')[0], 'version_info::one');
  assert.equal(await get(), 'a');

  // Requests run through the restart: every one is answered by the CDS cluster.
  const admin1 = await restartUnderLoad(run, 1, get, 'a');

  const clusters = (await request(`${admin1}/clusters`)).body.split('\n');
  assert.equal(clusters[0], 'version_info::one');
  assert.ok(clusters.includes('dyn::added_via_api::true'));
  assert.equal(await get(), 'a');

  // The new epoch's own subscription follows the file.
  pushCds(cdsPath, 'two', portB);
  await waitFor('the new epoch to serve version two', async () => ((await get()) === 'b' ? true : undefined));
  assert.equal((await request(`${admin1}/clusters`)).body.split('\n')[0], 'version_info::two');
});
