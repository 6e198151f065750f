// The runtime end to end: a disk layer's symlink swap picked up without a restart, the admin
// layer's rules through /runtime_modify, a runtime_fraction route switched in every worker
// within a second, and the platform DNS start-up check in serve and validate modes.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { runToExit } from '../helpers/cli_runs';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import { startUpstream, Upstream } from '../helpers/http_peers';
import { makeTempDir, request, RunningProxy, sleep, startProxy, waitFor } from '../helpers/proxy_process';
import { socketOwner } from '../helpers/socket_owner';

interface RuntimeJson {
  layers: string[];
  entries: Record<string, { final_value: string; layer_values: string[] }>;
}

async function runtimeOf(proxy: RunningProxy): Promise<RuntimeJson> {
  const res = await proxy.admin('/runtime');
  assert.equal(res.status, 200);
  assert.equal(res.headers['content-type'], 'application/json');
  return JSON.parse(res.body) as RuntimeJson;
}

/** Writes `values` (key -> content, dotted keys as nested directories) under `dir`. */
function writeTree(dir: string, values: Record<string, string>): void {
  for (const [key, content] of Object.entries(values)) {
    const file = path.join(dir, ...key.split('.'));
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content);
  }
}

/** What an operator does: `ln -s target tmp && mv -T tmp current`. */
function swapSymlink(root: string, target: string): void {
  const tmp = path.join(root, 'tmp');
  fs.symlinkSync(target, tmp);
  fs.renameSync(tmp, path.join(root, 'current'));
}

test('disk layer symlink swap, /runtime output and the admin layer rules', { timeout: 60_000 }, async () => {
  const root = makeTempDir();
  writeTree(path.join(root, 'v1', 'proxy'), { k: 'one\n', 'd.nested': 'disk\n' });
  swapSymlink(root, path.join(root, 'v1'));
  const config = {
    static_resources: { clusters: [localCluster('web', 1)] },
    layered_runtime: {
      layers: [
        { name: 'base', static_layer: { s: { t: 7 }, k: 'static' } },
        { name: 'disk', disk_layer: { symlink_root: path.join(root, 'current'), subdirectory: 'proxy' } },
        { name: 'missing', disk_layer: { symlink_root: path.join(root, 'current'), subdirectory: 'absent' } },
        { name: 'admin', admin_layer: {} },
      ],
    },
  };
  let proxy: RunningProxy | undefined;
  try {
    proxy = await startProxy(config);
    const initial = await runtimeOf(proxy);
    // The layer whose directory is missing is left out, as Envoy does.
    assert.deepEqual(initial.layers, ['base', 'disk', 'admin']);
    assert.deepEqual(initial.entries['k'], { final_value: 'one', layer_values: ['static', 'one', ''] });
    assert.deepEqual(initial.entries['s.t'], { final_value: '7', layer_values: ['7', '', ''] });
    assert.equal(initial.entries['d.nested']?.final_value, 'disk');

    writeTree(path.join(root, 'v2', 'proxy'), { k: 'two\n', 'd.nested': 'disk\n' });
    swapSymlink(root, path.join(root, 'v2'));
    await waitFor('the swapped disk layer', async () => ((await runtimeOf(proxy!)).entries['k']?.final_value === 'two' ? true : undefined), 10_000);

    const modify = (query: string) => proxy!.admin(`/runtime_modify${query}`, 'POST');
    assert.deepEqual([(await modify('?d.nested=admin&a=1')).status, (await modify('?d.nested=admin&a=1')).body], [200, 'OK\n']);
    let now = await runtimeOf(proxy);
    assert.deepEqual(now.entries['d.nested'], { final_value: 'admin', layer_values: ['', 'disk', 'admin'] });
    assert.equal(await proxy.stat('runtime.admin_overrides_active'), 1);
    // An empty value deletes the admin override; the disk value stays.
    assert.equal((await modify('?d.nested=&a=')).status, 200);
    now = await runtimeOf(proxy);
    assert.deepEqual(now.entries['d.nested'], { final_value: 'disk', layer_values: ['', 'disk', ''] });
    assert.equal(now.entries['a'], undefined);
    assert.equal(await proxy.stat('runtime.admin_overrides_active'), 0);
    // A disk value cannot be deleted.
    await modify('?k=');
    assert.equal((await runtimeOf(proxy)).entries['k']?.final_value, 'two');

    // The values may come as a form when there is no query.
    const form = await request(`${proxy.adminUrl}/runtime_modify`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'f=a%20b',
    });
    assert.equal(form.status, 200);
    assert.equal((await runtimeOf(proxy)).entries['f']?.final_value, 'a b');
    const usage = await modify('');
    assert.equal(usage.status, 400);
    assert.match(usage.body, /^usage: \/runtime_modify\?key1=value1&key2=value2&keyN=valueN\n/);

    assert.equal(await proxy.stat('runtime.num_layers'), 3);
    assert.ok((await proxy.stat('runtime.load_success'))! >= 3);
    assert.equal(await proxy.stat('runtime.load_error'), 0);
  } finally {
    await proxy?.cleanup();
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('/runtime_modify without an admin layer answers 503', { timeout: 30_000 }, async () => {
  const proxy = await startProxy({
    static_resources: { clusters: [localCluster('web', 1)] },
    layered_runtime: { layers: [{ name: 'static', static_layer: { a: 'b' } }] },
  });
  try {
    const res = await proxy.admin('/runtime_modify?a=c', 'POST');
    assert.deepEqual([res.status, res.body], [503, 'No admin layer specified']);
    assert.deepEqual((await runtimeOf(proxy)).layers, ['static']);
  } finally {
    await proxy.cleanup();
  }
});

/**
 * Requests on fresh connections until both workers have served at least `each`: returns which
 * upstream served each worker's requests. The worker is found from the upstream connection's
 * port (the proxy's end of it).
 */
async function trafficByWorker(port: number, upstreams: Upstream[], workers: readonly number[]): Promise<Map<number, Set<string>>> {
  const served = new Map<number, Set<string>>();
  for (let i = 0; i < 400 && !(served.size === workers.length && [...served.values()].every((s) => s.size > 0)); i++) {
    const before = upstreams.map((u) => u.seen.length);
    const res = await request(`http://127.0.0.1:${port}/`);
    assert.equal(res.status, 200);
    const which = upstreams.findIndex((u, j) => u.seen.length > before[j]!);
    const peerPort = Number(upstreams[which]!.seen.at(-1)!.headers['x-peer-port']);
    const pid = socketOwner(peerPort, workers);
    if (pid === undefined) continue;
    served.set(pid, (served.get(pid) ?? new Set()).add(upstreams[which]!.name));
  }
  return served;
}

test('a /runtime_modify change switches a runtime_fraction route in both workers within a second', { timeout: 60_000 }, async () => {
  // Each upstream notes the port the proxy connected from, to tell the workers apart.
  const upstreams = await Promise.all(
    ['a', 'b'].map((name) =>
      startUpstream(name, (_req, res) => {
        res.end(name);
      }),
    ),
  );
  for (const u of upstreams) {
    u.server.prependListener('request', (req) => {
      req.headers['x-peer-port'] = String(req.socket.remotePort);
    });
  }
  const routes = [
    { match: { prefix: '/', runtime_fraction: { default_value: { numerator: 100 }, runtime_key: 'routing.to_a' } }, route: { cluster: 'a' } },
    { match: { prefix: '/' }, route: { cluster: 'b' } },
  ];
  let proxy: RunningProxy | undefined;
  try {
    proxy = await startProxy(
      {
        static_resources: {
          clusters: upstreams.map((u) => localCluster(u.name, u.port)),
          listeners: [httpListener('http_in', 0, routes)],
        },
      },
      ['--concurrency', '2'],
    );
    const port = await proxy.listenerPort('http_in');
    const workers = proxy.groupPids().filter((pid) => pid !== proxy!.pid);
    assert.equal(workers.length, 2);

    const before = await trafficByWorker(port, upstreams, workers);
    assert.deepEqual([...before.values()].map((s) => [...s]), [['a'], ['a']]);

    const modified = await proxy.admin('/runtime_modify?routing.to_a=0', 'POST');
    assert.equal(modified.status, 200);
    await sleep(1000);
    const after = await trafficByWorker(port, upstreams, workers);
    assert.deepEqual([...after.values()].map((s) => [...s]), [['b'], ['b']]);
  } finally {
    await proxy?.cleanup();
    await Promise.all(upstreams.map((u) => u.close()));
  }
});

test('dns_resolvers with the platform DNS runtime feature on: exit 1 naming the field, serve and validate', { timeout: 60_000 }, async () => {
  const dir = makeTempDir();
  try {
    const config = {
      admin: { access_log_path: '/dev/null', address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      static_resources: {
        clusters: [{ ...localCluster('web', 1), dns_resolvers: [{ socket_address: { address: '127.0.0.1', port_value: 53 } }] }],
      },
      layered_runtime: {
        layers: [{ name: 'disk', disk_layer: { symlink_root: path.join(dir, 'current'), subdirectory: 'proxy' } }, { name: 'admin', admin_layer: {} }],
      },
    };
    writeTree(path.join(dir, 'v1', 'proxy'), { 'proxy.restart_features.use_platform_api_for_dns_lookups': 'true\n' });
    swapSymlink(dir, path.join(dir, 'v1'));
    const configPath = path.join(dir, 'bootstrap.json');
    fs.writeFileSync(configPath, JSON.stringify(config));
    for (const mode of [['--mode', 'validate'], ['--disable-hot-restart']]) {
      const result = await runToExit(['-c', configPath, ...mode], { timeoutMs: 20_000 });
      assert.equal(result.code, 1, result.stderr);
      assert.ok(result.stderr.includes(`${configPath}: static_resources.clusters[0].dns_resolvers: custom DNS resolvers cannot be used`), result.stderr);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
