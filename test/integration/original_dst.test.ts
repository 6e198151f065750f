// ORIGINAL_DST through the x-proxy-original-dst-host header (use_http_header), on the real proxy
// with two workers: each destination becomes a host of the supervisor's membership that
// /clusters lists with the requests of both workers, an invalid header counts
// original_dst_host_invalid, and a host no request used for a cleanup_interval leaves while a
// request it was serving completes. The original destination of redirected connections is
// tested in a network namespace (original_dst_netns.test.ts).

import assert from 'node:assert/strict';
import type * as http from 'node:http';
import { test } from 'node:test';
import { httpListener } from '../helpers/config_fixtures';
import { request, startUpstream, type Upstream } from '../helpers/http_peers';
import { type RunningProxy, startProxy, waitFor } from '../helpers/proxy_process';

const TIMEOUT = { timeout: 120_000 };
const HEADER = 'x-proxy-original-dst-host';

interface Setup {
  readonly proxy: RunningProxy;
  readonly listener: number;
  readonly upstreams: readonly Upstream[];
  /** Responses upstream 'held' has not answered yet. */
  readonly held: http.ServerResponse[];
}

/** `cleanupInterval`: long where a host must stay while the test reads it, short where it must leave. */
async function withProxy(cleanupInterval: string, body: (s: Setup) => Promise<void>): Promise<void> {
  const held: http.ServerResponse[] = [];
  const upstreams = [
    await startUpstream('a', (_req, res) => res.end('a')),
    await startUpstream('b', (_req, res) => res.end('b')),
    await startUpstream('held', (_req, res) => held.push(res)),
  ];
  let proxy: RunningProxy | null = null;
  try {
    proxy = await startProxy(
      {
        static_resources: {
          listeners: [httpListener('in', 0, [{ match: { prefix: '/' }, route: { cluster: 'dst', timeout: '60s' } }])],
          clusters: [
            {
              name: 'dst',
              type: 'ORIGINAL_DST',
              lb_policy: 'CLUSTER_PROVIDED',
              connect_timeout: '1s',
              cleanup_interval: cleanupInterval,
              original_dst_lb_config: { use_http_header: true },
            },
          ],
        },
      },
      ['--concurrency', '2'],
    );
    await body({ proxy, listener: await proxy.listenerPort('in'), upstreams, held });
  } finally {
    for (const res of held.splice(0)) res.end('late');
    await proxy?.cleanup();
    await Promise.all(upstreams.map((u) => u.close()));
  }
}

/** The `<cluster>::<address>::<stat>::<value>` lines of /clusters for cluster dst, as address -> stat -> value. */
async function dstHosts(proxy: RunningProxy): Promise<Map<string, Map<string, string>>> {
  const hosts = new Map<string, Map<string, string>>();
  for (const line of (await proxy.admin('/clusters')).body.split('\n')) {
    const [cluster, address, stat, value] = line.split('::');
    if (cluster !== 'dst' || value === undefined || !/^[0-9.]+:[0-9]+$/.test(address!)) continue;
    if (!hosts.has(address!)) hosts.set(address!, new Map());
    hosts.get(address!)!.set(stat!, value);
  }
  return hosts;
}

function send(port: number, headers: http.OutgoingHttpHeaders = {}) {
  // connection: close, so that both workers take requests.
  return request(port, { headers: { connection: 'close', ...headers } });
}

test('each destination named by the header becomes a host that both workers serve and /clusters counts whole', TIMEOUT, async () => {
  await withProxy('60s', async ({ proxy, listener, upstreams }) => {
    const [a, b] = upstreams;
    const perDestination = 12;
    for (let i = 0; i < perDestination; i++) {
      assert.equal((await send(listener, { [HEADER]: `127.0.0.1:${a!.port}` })).body, 'a');
      assert.equal((await send(listener, { [HEADER]: `127.0.0.1:${b!.port}` })).body, 'b');
    }
    // Only the first value counts.
    assert.equal((await send(listener, { [HEADER]: [`127.0.0.1:${b!.port}`, `127.0.0.1:${a!.port}`] })).body, 'b');
    const hosts = await waitFor('both hosts with every request counted', async () => {
      const found = await dstHosts(proxy);
      const counted = found.get(`127.0.0.1:${a!.port}`)?.get('rq_total') === String(perDestination) && found.get(`127.0.0.1:${b!.port}`)?.get('rq_total') === String(perDestination + 1);
      return counted ? found : undefined;
    });
    assert.equal(hosts.get(`127.0.0.1:${a!.port}`)!.get('hostname'), `dst127.0.0.1:${a!.port}`);
    assert.equal(hosts.get(`127.0.0.1:${a!.port}`)!.get('rq_success'), String(perDestination));
    assert.equal(await proxy.stat('cluster.dst.membership_total'), 2);
    assert.equal(await proxy.stat('cluster.dst.upstream_rq_total'), 2 * perDestination + 1);
  });
});

test('an invalid header counts original_dst_host_invalid; with neither header nor redirect there is no host (503)', TIMEOUT, async () => {
  await withProxy('60s', async ({ proxy, listener }) => {
    for (const value of ['not-an-address', '127.0.0.1', '127.0.0.1:99999', 'localhost:80', '::1:80']) {
      const reply = await send(listener, { [HEADER]: value });
      assert.equal(reply.status, 503, value);
      assert.equal(reply.body, 'no healthy upstream');
    }
    assert.equal((await send(listener)).status, 503);
    assert.equal(await proxy.stat('cluster.dst.original_dst_host_invalid'), 5);
    assert.equal(await proxy.stat('cluster.dst.upstream_cx_none_healthy'), 6);
    assert.equal((await dstHosts(proxy)).size, 0);
  });
});

test('a host unused for a cleanup_interval leaves /clusters; the request it was serving completes', TIMEOUT, async () => {
  // 3 s: long enough that both hosts are still listed when first read on a busy machine.
  await withProxy('3s', async ({ proxy, listener, upstreams, held }) => {
    const [a, , slow] = upstreams;
    assert.equal((await send(listener, { [HEADER]: `127.0.0.1:${a!.port}` })).body, 'a');
    const pending = send(listener, { [HEADER]: `127.0.0.1:${slow!.port}` });
    await waitFor('the held request upstream', () => (held.length === 1 ? true : undefined));
    await waitFor('both hosts listed', async () => ((await dstHosts(proxy)).size === 2 ? true : undefined));
    // Two sweeps at most: the first clears the mark of the pick, the next removes the host.
    await waitFor('both hosts removed', async () => ((await dstHosts(proxy)).size === 0 ? true : undefined), 30_000);
    assert.equal(await proxy.stat('cluster.dst.membership_total'), 0);
    held.shift()!.end('done');
    const reply = await pending;
    assert.equal(reply.status, 200);
    assert.equal(reply.body, 'done');
    // A destination used again is a host again.
    assert.equal((await send(listener, { [HEADER]: `127.0.0.1:${a!.port}` })).body, 'a');
    await waitFor('host a back', async () => ((await dstHosts(proxy)).has(`127.0.0.1:${a!.port}`) ? true : undefined));
  });
});
