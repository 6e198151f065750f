// A hot restart under file-based LDS: the new epoch resubscribes, takes the previous epoch's
// listen socket for the LDS listener's address (as it does a static listener's), and serves it
// before it answers /ready; requests through the restart never fail, and a change after it
// reaches the new epoch.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { test } from 'node:test';
import { freePort } from '../../bench/free_port';
import { routeAllListener } from '../helpers/config_fixtures';
import { listen } from '../helpers/http_peers';
import { HotRestarterRun, runLoad } from '../helpers/hot_restart_run';
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
  const load = runLoad(2, get);
  run.signal('SIGHUP');
  const admin1 = await run.adminOf(1);
  const answers = await load.stop();
  assert.ok(answers.length > 0);
  assert.deepEqual(new Set(answers), new Set(['a']));
  assert.equal((await request(`${admin1}/listeners`)).body, `dyn::127.0.0.1:${httpPort}\n`);

  // The new epoch's own subscription follows the file.
  pushLds(ldsPath, 'two', httpPort, 'b');
  await waitFor('the new epoch to serve version two', async () => ((await get()) === 'b' ? true : undefined));
});
