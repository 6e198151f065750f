// The workers are forked before the supervisor loads the configuration, get their init while it
// initializes its clusters and start serving once it is done; then they intern the clusters'
// stat names, which GET /stats waits for. Nothing sent meanwhile is lost, a listener
// /drain_listeners stopped in between is not served by them, and a configuration refused ends them.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as crypto from 'node:crypto';
import { once } from 'node:events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { httpListener } from '../helpers/config_fixtures';
import { listenerPort, makeTempDir, PROXY_BIN, request, spawnProxy, startProxy, waitFor } from '../helpers/proxy_process';
import { refuses } from '../helpers/refused_port';
import { XdsServer } from '../helpers/xds_server';

const CLUSTER_TYPE = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';

test('a listener drained while the clusters initialize is not served by the workers started after', { timeout: 90_000 }, async (t) => {
  const xds = await XdsServer.start();
  t.after(() => xds.close());
  const ok = [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: 'ok' } } }];
  const inbound = { ...(httpListener('inbound', 0, ok) as object), traffic_direction: 'INBOUND' };
  const dir = makeTempDir();
  const config = {
    node: { id: 'n', cluster: 'c' },
    admin: { access_log_path: '/dev/null', address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    static_resources: {
      listeners: [inbound, httpListener('other', 0, ok)],
      clusters: [
        {
          name: 'xds',
          connect_timeout: '1s',
          http2_protocol_options: {},
          load_assignment: { cluster_name: 'xds', endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: xds.port } } } }] }] },
        },
      ],
    },
    // CDS holds the start until the management server answers (no initial_fetch_timeout).
    dynamic_resources: {
      cds_config: { ads: {}, resource_api_version: 'V3', initial_fetch_timeout: '0s' },
      ads_config: { api_type: 'GRPC', transport_api_version: 'V3', grpc_services: [{ envoy_grpc: { cluster_name: 'xds' } }] },
    },
  };
  const configPath = path.join(dir, 'bootstrap.json');
  fs.writeFileSync(configPath, JSON.stringify(config));
  const addressPath = path.join(dir, 'admin_address');
  const proxy = spawnProxy(['-c', configPath, '--admin-address-path', addressPath, '--disable-hot-restart', '--concurrency', '2'], { dir });
  t.after(() => proxy.cleanup());
  const adminUrl = `http://${await waitFor('the admin address', () => (fs.existsSync(addressPath) ? fs.readFileSync(addressPath, 'utf8') || undefined : undefined))}`;
  await waitFor('the CDS request', () => xds.requests.find((r) => r.type_url === CLUSTER_TYPE));
  assert.equal((await request(`${adminUrl}/ready`)).body, 'INITIALIZING\n');
  const inboundPort = await listenerPort(adminUrl, 'inbound');
  const otherPort = await listenerPort(adminUrl, 'other');
  // Both workers exist already, waiting for their start.
  await waitFor('two forked workers', () => (proxy.groupPids().length === 3 ? true : undefined));
  assert.equal((await request(`${adminUrl}/ready`)).body, 'INITIALIZING\n');

  assert.equal((await request(`${adminUrl}/drain_listeners?inboundonly`, { method: 'POST' })).status, 200);
  xds.setResources(CLUSTER_TYPE, 'v1', []);
  await waitFor('LIVE', async () => ((await request(`${adminUrl}/ready`)).body === 'LIVE\n' ? true : undefined));

  assert.equal((await request(`http://127.0.0.1:${otherPort}/`)).body, 'ok');
  assert.equal(await refuses(inboundPort), true, 'no process holds the drained listener');
  // The workers named the static cluster's stats once they served (a name no supervisor code
  // creates), and /stats waited for them.
  const declared = (await request(`${adminUrl}/stats?filter=^cluster\\.xds\\.upstream_rq_pending_overflow$`)).body;
  assert.equal(declared, 'cluster.xds.upstream_rq_pending_overflow: 0\n');
});

/** The pids of this user's processes whose environment has `name=value`. */
function processesWithEnv(name: string, value: string): number[] {
  const wanted = `${name}=${value}`;
  return fs.readdirSync('/proc').flatMap((entry) => {
    if (!/^\d+$/.test(entry)) return [];
    try {
      return fs.readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0').includes(wanted) ? [Number(entry)] : [];
    } catch {
      return [];
    }
  });
}

test('more static listeners than the handoff socket queues (12 against 10): every worker serves each', { timeout: 60_000 }, async (t) => {
  const names = Array.from({ length: 12 }, (_, i) => `l${i}`);
  const listeners = names.map((name) => httpListener(name, 0, [{ match: { prefix: '/' }, direct_response: { status: 200, body: { inline_string: name } } }]));
  const proxy = await startProxy({ static_resources: { listeners } }, ['--concurrency', '2', '-l', 'info']);
  t.after(() => proxy.cleanup());
  // Each worker logs each listener it serves: [pid] ... listener 'lN' serving. The lines may reach
  // the pipe after the admin reports LIVE.
  const serving = () => new Set([...proxy.stderr.matchAll(/\[(\d+)\]\[info\]\[conn_handler\].* listener '(l\d+)' serving/g)].map((m) => `${m[1]} ${m[2]}`));
  await waitFor('every worker to log every listener', () => (serving().size === 2 * names.length ? true : undefined), 10_000).catch(() => undefined);
  assert.equal(serving().size, 2 * names.length, proxy.stderr);
  for (const name of names) assert.equal((await request(`http://127.0.0.1:${await proxy.listenerPort(name)}/`)).body, name);
});

test('a configuration refused at load ends the workers forked while it loaded: none outlives the supervisor', { timeout: 30_000 }, async (t) => {
  const dir = makeTempDir();
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const config = path.join(dir, 'bootstrap.yaml');
  fs.writeFileSync(config, 'static_resources: { clusters: [{ name: c, connect_timeout: 1s, type: STATIC, lb_policy: NO_SUCH_POLICY }] }\n');
  // Every process of this run carries the mark: the supervisor, and the workers it forks.
  const mark = crypto.randomUUID();
  const child = spawn(process.execPath, [PROXY_BIN, '-c', config, '--concurrency', '2', '--disable-hot-restart'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, PROXY_TEST_RUN: mark },
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  t.after(() => {
    for (const pid of processesWithEnv('PROXY_TEST_RUN', mark)) process.kill(pid, 'SIGKILL');
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  assert.equal(code, 1, stderr);
  assert.match(stderr, /lb_policy/);
  await waitFor('the workers to exit', () => (processesWithEnv('PROXY_TEST_RUN', mark).length === 0 ? true : undefined), 10_000);
});
