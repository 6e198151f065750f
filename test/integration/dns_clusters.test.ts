// STRICT_DNS and LOGICAL_DNS served by a real proxy with two workers, resolving through a DNS
// server the test runs on loopback: the supervisor resolves, and every change reaches both
// workers (and a restarted one) without a restart of the proxy; answers that are malformed, a
// resolver that is gone and TTLs beyond any timer leave the hosts as they were.

import assert from 'node:assert/strict';
import * as http from 'node:http';
import * as net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { DnsTestServer } from '../helpers/dns_test_server';
import { request, type RunningProxy, sleep, startProxy, waitFor } from '../helpers/proxy_process';
import { socketOwner } from '../helpers/socket_owner';

const TIMEOUT = { timeout: 90_000 };

/** An upstream on `ip` that records which proxy worker each request came from. */
interface Upstream {
  readonly server: http.Server;
  readonly seen: (number | undefined)[];
  /** While set, responses wait for release(). */
  holding: boolean;
  /** Requests waiting for release(). */
  heldCount(): number;
  release(): void;
}

async function upstreamsOnOnePort(ips: readonly string[], workers: () => number[]): Promise<{ port: number; upstreams: Upstream[] }> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const upstreams: Upstream[] = [];
    let port = 0;
    try {
      for (const ip of ips) {
        const seen: (number | undefined)[] = [];
        const held: http.ServerResponse[] = [];
        const server = http.createServer((req, res) => {
          seen.push(socketOwner(req.socket.remotePort!, workers()));
          if (upstream.holding) held.push(res);
          else res.end(ip);
        });
        const upstream: Upstream = {
          server,
          seen,
          holding: false,
          heldCount: () => held.length,
          release: () => {
            upstream.holding = false;
            for (const res of held.splice(0)) res.end(ip);
          },
        };
        await new Promise<void>((resolve, reject) => {
          server.once('error', reject);
          server.listen(port, ip, () => resolve());
        });
        port = (server.address() as net.AddressInfo).port;
        upstreams.push(upstream);
      }
      return { port, upstreams };
    } catch {
      for (const u of upstreams) u.server.close();
    }
  }
  throw new Error('no port free on every upstream address');
}

/** `cluster` adds fields to (or overrides those of) the one cluster, `svc`. */
function bootstrap(type: string, dnsPort: number, upstreamPort: number, cluster: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    static_resources: {
      listeners: [
        {
          name: 'in',
          address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
          filter_chains: [
            {
              filters: [
                {
                  name: 'envoy.filters.network.http_connection_manager',
                  typed_config: {
                    '@type': 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
                    stat_prefix: 'in',
                    route_config: { virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster: 'svc' } }] }] },
                    http_filters: [{ name: 'envoy.filters.http.router' }],
                  },
                },
              ],
            },
          ],
        },
      ],
      clusters: [
        {
          name: 'svc',
          type,
          connect_timeout: '1s',
          dns_refresh_rate: '0.1s',
          dns_lookup_family: 'V4_ONLY',
          dns_resolvers: [{ socket_address: { address: '127.0.0.1', port_value: dnsPort } }],
          load_assignment: {
            cluster_name: 'svc',
            endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: 'svc.test', port_value: upstreamPort } } } }] }],
          },
          ...cluster,
        },
      ],
    },
  };
}

/** `n` requests, each on its own connection (so that both workers take some). */
async function requests(port: number, n: number): Promise<string[]> {
  const bodies: string[] = [];
  for (let i = 0; i < n; i++) bodies.push((await request(`http://127.0.0.1:${port}/`, { headers: { connection: 'close' } })).body);
  return bodies;
}

/** Sends requests until `upstream` has seen each of `workers`. */
async function untilEveryWorkerReaches(port: number, upstream: Upstream, workers: readonly number[], what: string): Promise<void> {
  await waitFor(what, async () => {
    await requests(port, 4);
    return workers.every((w) => upstream.seen.includes(w)) ? true : undefined;
  }, 30_000);
}

describe('STRICT_DNS with two workers', TIMEOUT, () => {
  let dns: DnsTestServer;
  let proxy: RunningProxy;
  let upstreams: Upstream[];
  let listener: number;
  let workers: number[] = [];

  before(async () => {
    dns = await DnsTestServer.start();
    const found = await upstreamsOnOnePort(['127.0.0.1', '127.0.0.2'], () => workers);
    upstreams = found.upstreams;
    dns.zone.set('svc.test', { a: [{ address: '127.0.0.1', ttl: 1 }] });
    proxy = await startProxy(bootstrap('STRICT_DNS', dns.port, found.port), ['--concurrency', '2']);
    workers = proxy.groupPids().filter((p) => p !== proxy.pid);
    assert.equal(workers.length, 2);
    listener = await proxy.listenerPort('in');
  });

  after(async () => {
    await proxy?.cleanup();
    for (const u of upstreams ?? []) u.server.close();
    await dns?.close();
  });

  test('the first answer is the membership at LIVE, in /clusters and in both workers', async () => {
    const clusters = (await proxy.admin('/clusters')).body;
    assert.match(clusters, /^svc::127\.0\.0\.1:\d+::hostname::svc\.test$/m);
    await untilEveryWorkerReaches(listener, upstreams[0]!, workers, 'both workers to reach 127.0.0.1');
    assert.ok((await proxy.stat('cluster.svc.update_success'))! >= 1);
    assert.equal(await proxy.stat('cluster.svc.membership_total'), 1);
  });

  test('a changed answer reaches both workers, and a restarted worker starts from it', async () => {
    dns.zone.set('svc.test', { a: [{ address: '127.0.0.2', ttl: 1 }] });
    await waitFor('/clusters to show the new address', async () => {
      const body = (await proxy.admin('/clusters')).body;
      return /svc::127\.0\.0\.2:/.test(body) && !/svc::127\.0\.0\.1:/.test(body) ? true : undefined;
    });
    await untilEveryWorkerReaches(listener, upstreams[1]!, workers, 'both workers to reach 127.0.0.2');
    const before = upstreams[0]!.seen.length;
    assert.deepEqual(new Set(await requests(listener, 10)), new Set(['127.0.0.2']));
    assert.equal(upstreams[0]!.seen.length, before, 'no request reached the address DNS no longer gives');
    assert.ok((await proxy.stat('cluster.svc.membership_change'))! >= 2);

    // A worker killed now comes back with the current membership, not the configuration's.
    process.kill(workers[0]!, 'SIGKILL');
    const replacement = await waitFor('the replacement worker', () => {
      const now = proxy.groupPids().filter((p) => p !== proxy.pid && !workers.includes(p));
      return now.length === 1 ? now[0] : undefined;
    });
    workers = [workers[1]!, replacement];
    await untilEveryWorkerReaches(listener, upstreams[1]!, [replacement], 'the replacement worker to reach 127.0.0.2');
    assert.equal(upstreams[0]!.seen.length, before);
  });
});

describe('LOGICAL_DNS', TIMEOUT, () => {
  let dns: DnsTestServer;
  let proxy: RunningProxy;
  let upstreams: Upstream[];
  let listener: number;

  before(async () => {
    dns = await DnsTestServer.start();
    const found = await upstreamsOnOnePort(['127.0.0.1', '127.0.0.2'], () => []);
    upstreams = found.upstreams;
    dns.zone.set('svc.test', { a: [{ address: '127.0.0.1', ttl: 1 }, { address: '127.0.0.2', ttl: 1 }] });
    proxy = await startProxy(bootstrap('LOGICAL_DNS', dns.port, found.port));
    listener = await proxy.listenerPort('in');
  });

  after(async () => {
    await proxy?.cleanup();
    for (const u of upstreams ?? []) u.server.close();
    await dns?.close();
  });

  test('one host at the first address; when DNS moves it, its open connection stays and new ones follow', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 2 });
    try {
      const url = `http://127.0.0.1:${listener}/`;
      assert.equal((await request(url, { agent })).body, '127.0.0.1');
      const clusters = (await proxy.admin('/clusters')).body;
      assert.equal(clusters.match(/::hostname::/g)?.length, 1, 'one logical host');

      dns.zone.set('svc.test', { a: [{ address: '127.0.0.2', ttl: 1 }] });
      await waitFor('/clusters to follow the first address', async () => (/svc::127\.0\.0\.2:\d+::hostname::svc\.test/.test((await proxy.admin('/clusters')).body) ? true : undefined));
      // While the old address holds its answers, every request needs a new upstream connection:
      // once the worker has the update, they go to the new address.
      const [oldAddress, newAddress] = upstreams;
      oldAddress!.holding = true;
      let settled = 0;
      const pending: Promise<unknown>[] = [];
      const send = (options?: { agent: http.Agent }) => pending.push(request(url, options).finally(() => settled++));
      send({ agent });
      await waitFor('a new connection to reach the new address', () => {
        if (newAddress!.seen.length > 0) return true;
        send();
        return undefined;
      });
      // Every request not held at the old address has finished, so the old address's
      // connections are the last ones freed.
      await waitFor('the requests to the new address to finish', () => (settled === pending.length - oldAddress!.heldCount() ? true : undefined));
      oldAddress!.release();
      await Promise.all(pending);
      // The connections to the old address are the logical host's, not drained: the most
      // recently freed one (the old address's, released last) serves the next request.
      assert.equal((await request(url, { agent })).body, '127.0.0.1');
      assert.equal(await proxy.stat('cluster.svc.membership_total'), 1);
      assert.equal(await proxy.stat('cluster.svc.membership_change'), 1);
    } finally {
      agent.destroy();
    }
  });
});

describe('STRICT_DNS facing a resolver that misbehaves', TIMEOUT, () => {
  let dns: DnsTestServer;
  let dnsClosed = false;
  let proxy: RunningProxy;
  let upstreams: Upstream[];
  let listener: number;
  const good = { a: [{ address: '127.0.0.1', ttl: 0 }] };

  before(async () => {
    dns = await DnsTestServer.start();
    const found = await upstreamsOnOnePort(['127.0.0.1'], () => []);
    upstreams = found.upstreams;
    dns.zone.set('svc.test', good);
    proxy = await startProxy(bootstrap('STRICT_DNS', dns.port, found.port, { respect_dns_ttl: true, dns_failure_refresh_rate: { base_interval: '0.1s', max_interval: '0.2s' } }));
    listener = await proxy.listenerPort('in');
  });

  after(async () => {
    await proxy?.cleanup();
    for (const u of upstreams ?? []) u.server.close();
    if (!dnsClosed) await dns?.close();
  });

  const counter = async (name: string) => (await proxy.stat(`cluster.svc.${name}`)) ?? 0;

  /** Waits for `n` more update_failure, then checks that no success was counted and the host is the good one. */
  async function failuresKeepTheHost(what: string, n: number): Promise<void> {
    const [failures, successes] = [await counter('update_failure'), await counter('update_success')];
    await waitFor(`${what}: ${n} more update_failure`, async () => ((await counter('update_failure')) >= failures + n ? true : undefined), 10_000);
    assert.equal(await counter('update_success'), successes, `${what}: no update_success`);
    const clusters = (await proxy.admin('/clusters')).body;
    assert.match(clusters, /^svc::127\.0\.0\.1:\d+::hostname::svc\.test$/m, what);
    assert.doesNotMatch(clusters, /undefined|svc::127\.0\.0\.2/, what);
    assert.equal(await counter('membership_total'), 1, what);
    assert.equal((await request(`http://127.0.0.1:${listener}/`)).body, '127.0.0.1', what);
  }

  /** Serves the good answer again and waits for it to be counted. */
  async function recover(): Promise<void> {
    dns.zone.set('svc.test', good);
    const successes = await counter('update_success');
    await waitFor('a success after the good answer is back', async () => ((await counter('update_success')) > successes ? true : undefined), 10_000);
  }

  test('an answer cut short is a counted failure, and the host stays', async () => {
    dns.zone.set('svc.test', { cutBytes: 2, a: [{ address: '127.0.0.1', ttl: 0 }] });
    await failuresKeepTheHost('cut by 2 bytes', 3);
    await recover();
  });

  test('an A record of 6 bytes, or of 2, is a counted failure, and the host stays', async () => {
    dns.zone.set('svc.test', { addressLength: 6, a: [{ address: '127.0.0.2', ttl: 0 }] });
    await failuresKeepTheHost('A of 6 bytes', 3);
    dns.zone.set('svc.test', { addressLength: 2, a: [{ address: '127.0.0.2', ttl: 0 }] });
    await failuresKeepTheHost('A of 2 bytes', 3);
    await recover();
  });

  test("with the resolver's port closed every attempt ends in a counted failure, and attempts go on", async () => {
    await dns.close();
    dnsClosed = true;
    // At most 0.2 s apart (dns_failure_refresh_rate), each failing at once on ECONNREFUSED.
    await failuresKeepTheHost('port closed', 10);
    const [attempts, successes, failures] = [await counter('update_attempt'), await counter('update_success'), await counter('update_failure')];
    assert.ok(attempts - successes - failures <= 1, `${attempts} attempts, ${successes} successes, ${failures} failures: at most one in flight`);
  });
});

describe('respect_dns_ttl with a TTL beyond the longest timer', TIMEOUT, () => {
  let dns: DnsTestServer;
  let proxy: RunningProxy;
  let upstreams: Upstream[];

  before(async () => {
    dns = await DnsTestServer.start();
    const found = await upstreamsOnOnePort(['127.0.0.1'], () => []);
    upstreams = found.upstreams;
    // 3,000,000 s: 34.7 days, past setTimeout's 24.8.
    dns.zone.set('svc.test', { a: [{ address: '127.0.0.1', ttl: 3_000_000 }] });
    proxy = await startProxy(bootstrap('STRICT_DNS', dns.port, found.port, { respect_dns_ttl: true }));
  });

  after(async () => {
    await proxy?.cleanup();
    for (const u of upstreams ?? []) u.server.close();
    await dns?.close();
  });

  test('the name is not asked again (no query loop)', async () => {
    const asked = dns.count('svc.test');
    assert.equal(asked, 1);
    await sleep(1500);
    assert.equal(dns.count('svc.test'), asked, 'no query after the first');
    assert.equal(await proxy.stat('cluster.svc.update_attempt'), 1);
    assert.match((await proxy.admin('/clusters')).body, /^svc::127\.0\.0\.1:\d+::hostname::svc\.test$/m);
  });
});
