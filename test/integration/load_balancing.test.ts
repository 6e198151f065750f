// The load balancing policies served by the real proxy with two workers, over three upstreams
// the test runs: each answers with its own name, so the hits per upstream show how a policy
// spreads requests. A case is a cluster (its lb_policy and options), optionally a route action
// (hash policies, metadata_match) and endpoint metadata, and how the upstreams answer.

import assert from 'node:assert/strict';
import type * as http from 'node:http';
import { describe, test } from 'node:test';
import { httpListener } from '../helpers/config_fixtures';
import { startUpstream, type Upstream } from '../helpers/http_peers';
import { request, type RunningProxy, startProxy, waitFor } from '../helpers/proxy_process';
import { socketOwner } from '../helpers/socket_owner';

const TIMEOUT = { timeout: 90_000 };
const UPSTREAMS = ['u0', 'u1', 'u2'] as const;

interface BalancedSetup {
  /** Cluster fields besides name, type, connect_timeout and load_assignment. */
  readonly cluster: Record<string, unknown>;
  /** Route action fields besides the cluster (hash_policy, metadata_match). */
  readonly route?: Record<string, unknown>;
  /** Each endpoint's metadata, by upstream index. */
  readonly metadata?: readonly (Record<string, unknown> | undefined)[];
  /** Upstreams (by index) that hold their responses until released. */
  readonly holding?: readonly number[];
  /** Record the proxy worker that sent each request (costs a /proc scan per request). */
  readonly trackWorkers?: boolean;
}

interface Hit {
  readonly upstream: number;
  /** The proxy worker's pid, when tracked. */
  readonly worker: number | undefined;
}

interface Balanced {
  readonly proxy: RunningProxy;
  readonly listener: number;
  readonly workers: readonly number[];
  readonly upstreams: readonly Upstream[];
  /** Every request the upstreams received, in order. */
  readonly hits: Hit[];
  /** Requests each upstream received. */
  counts(): number[];
  /** Answers every held response, and those that arrive later. */
  release(): void;
  /** One request on its own connection (so that both workers take some); resolves to the body. */
  send(headers?: http.OutgoingHttpHeaders): Promise<string>;
  close(): Promise<void>;
}

/** Three upstreams and a proxy with `--concurrency 2` in front of them, ready to serve. */
async function startBalanced(setup: BalancedSetup): Promise<Balanced> {
  const hits: Hit[] = [];
  const held: http.ServerResponse[] = [];
  let holding = new Set(setup.holding ?? []);
  let workers: number[] = [];
  const upstreams: Upstream[] = [];
  for (const [index, name] of UPSTREAMS.entries()) {
    upstreams.push(
      await startUpstream(name, (req, res) => {
        hits.push({ upstream: index, worker: setup.trackWorkers ? socketOwner(req.socket.remotePort!, workers) : undefined });
        if (holding.has(index)) held.push(res);
        else res.end(name);
      }),
    );
  }
  let proxy: RunningProxy;
  try {
    proxy = await startProxy(bootstrap(setup, upstreams), ['--concurrency', '2']);
  } catch (e) {
    await Promise.all(upstreams.map((u) => u.close()));
    throw e;
  }
  workers = proxy.groupPids().filter((p) => p !== proxy.pid);
  const listener = await proxy.listenerPort('in');
  const release = (): void => {
    holding = new Set();
    for (const res of held.splice(0)) res.end('held');
  };
  return {
    proxy,
    listener,
    workers,
    upstreams,
    hits,
    counts: () => UPSTREAMS.map((_, i) => hits.filter((h) => h.upstream === i).length),
    release,
    send: async (headers = {}) => (await request(`http://127.0.0.1:${listener}/`, { headers: { connection: 'close', ...headers } })).body,
    close: async () => {
      release();
      await proxy.cleanup();
      await Promise.all(upstreams.map((u) => u.close()));
    },
  };
}

function bootstrap(setup: BalancedSetup, upstreams: readonly Upstream[]): Record<string, unknown> {
  const endpoints = upstreams.map((u, i) => ({
    endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: u.port } } },
    ...(setup.metadata?.[i] !== undefined ? { metadata: setup.metadata[i] } : {}),
  }));
  return {
    static_resources: {
      listeners: [httpListener('in', 0, [{ match: { prefix: '/' }, route: { cluster: 'backend', ...setup.route } }])],
      clusters: [
        {
          name: 'backend',
          type: 'STATIC',
          connect_timeout: '1s',
          load_assignment: { cluster_name: 'backend', endpoints: [{ lb_endpoints: endpoints }] },
          ...setup.cluster,
        },
      ],
    },
  };
}

/** Runs `body` against a fresh setup, which is closed whatever happens. */
async function withBalanced(setup: BalancedSetup, body: (b: Balanced) => Promise<void>): Promise<void> {
  const balanced = await startBalanced(setup);
  try {
    await body(balanced);
  } finally {
    await balanced.close();
  }
}

async function sendSequentially(b: Balanced, n: number): Promise<void> {
  for (let i = 0; i < n; i++) await b.send();
}

describe('load balancing over three upstreams, two workers', TIMEOUT, () => {
  test('ROUND_ROBIN: each worker takes the hosts in turn, so the counts differ by at most one per worker', async () => {
    await withBalanced({ cluster: { lb_policy: 'ROUND_ROBIN' }, trackWorkers: true }, async (b) => {
      assert.equal(b.workers.length, 2);
      await sendSequentially(b, 60);
      const counts = b.counts();
      assert.equal(counts.reduce((x, y) => x + y), 60);
      assert.ok(Math.max(...counts) - Math.min(...counts) <= b.workers.length, `counts ${counts.join(', ')}`);
      // Per worker too: each walks its own round.
      for (const worker of b.workers) {
        const own = UPSTREAMS.map((_, i) => b.hits.filter((h) => h.worker === worker && h.upstream === i).length);
        assert.ok(Math.max(...own) - Math.min(...own) <= 1, `worker ${worker}: ${own.join(', ')}`);
      }
    });
  });

  test('RANDOM: every host is reached, each in about a third of the requests', async () => {
    await withBalanced({ cluster: { lb_policy: 'RANDOM' } }, async (b) => {
      await sendSequentially(b, 300);
      const counts = b.counts();
      // Binomial(300, 1/3): 100 ± 8.2; the bounds are six standard deviations away.
      for (const c of counts) assert.ok(c >= 50 && c <= 150, `counts ${counts.join(', ')}`);
    });
  });

  test('LEAST_REQUEST: requests in flight on a slow host keep new ones away from it, on both workers', async () => {
    await withBalanced({ cluster: { lb_policy: 'LEAST_REQUEST' }, holding: [2] }, async (b) => {
      const n = 90;
      const pending: Promise<string>[] = [];
      for (let i = 0; i < n; i++) {
        const reply = b.send();
        pending.push(reply);
        // Picked after the previous request reached its host: the slow host's held requests
        // are in its rq_active, and a fast host's answered one is not in its own any more.
        await waitFor('the upstream to receive the request', () => (b.hits.length === i + 1 ? true : undefined));
        if (b.hits[i]!.upstream !== 2) await reply;
      }
      const counts = b.counts();
      b.release();
      await Promise.all(pending);
      // Once the slow host holds one, it is picked only when both samples land on it (1/9):
      // about 10 of 90 (sd 3), where round robin would send it 30.
      assert.ok(counts[2]! <= 25, `counts ${counts.join(', ')}`);
      assert.ok(counts[0]! + counts[1]! >= 65, `counts ${counts.join(', ')}`);
      assert.ok(counts[2]! >= 1, `counts ${counts.join(', ')}`);
    });
  });

  for (const policy of ['RING_HASH', 'MAGLEV']) {
    test(`${policy} on a header: each key stays on one host, whichever worker takes the request`, async () => {
      const setup = { cluster: { lb_policy: policy }, route: { hash_policy: [{ header: { header_name: 'x-user' } }] }, trackWorkers: true };
      await withBalanced(setup, async (b) => {
        const users = Array.from({ length: 12 }, (_, i) => `user-${i}`);
        const hostsOf = new Map<string, Set<number>>();
        const workersOf = new Map<string, Set<number | undefined>>();
        for (let round = 0; round < 6; round++) {
          for (const user of users) {
            await b.send({ 'x-user': user });
            const hit = b.hits[b.hits.length - 1]!;
            (hostsOf.get(user) ?? hostsOf.set(user, new Set()).get(user)!).add(hit.upstream);
            (workersOf.get(user) ?? workersOf.set(user, new Set()).get(user)!).add(hit.worker);
          }
        }
        for (const [user, hosts] of hostsOf) assert.equal(hosts.size, 1, `${user} reached upstreams ${[...hosts].join(', ')}`);
        // Both workers computed the same table: some key went through both and still met one host.
        assert.ok([...workersOf.values()].some((w) => w.size === 2), 'no key was served by both workers');
        // Twelve keys do not all land on one of three equal hosts (each key: 1/3 per host).
        assert.ok(new Set([...hostsOf.values()].map((h) => [...h][0])).size >= 2, `counts ${b.counts().join(', ')}`);
        // Both workers build the table; the gauges tell of one table, not of the sum of two.
        if (policy === 'RING_HASH') {
          const size = await b.proxy.stat('cluster.backend.ring_hash_lb.size');
          assert.ok(size !== undefined && size >= 1024 && size < 1100, `ring_hash_lb.size ${size}`);
        } else {
          const most = await b.proxy.stat('cluster.backend.maglev_lb.max_entries_per_host');
          assert.ok(most !== undefined && most > 65537 / 3 - 10 && most < 65537 / 3 + 10, `maglev_lb.max_entries_per_host ${most}`);
        }
      });
    });
  }

  test('subsets: a route whose metadata_match names version v1 reaches only the v1 hosts', async () => {
    const version = (v: string) => ({ filter_metadata: { 'envoy.lb': { version: v } } });
    const setup = {
      cluster: { lb_subset_config: { fallback_policy: 'NO_FALLBACK', subset_selectors: [{ keys: ['version'] }] } },
      route: { metadata_match: { filter_metadata: { 'envoy.lb': { version: 'v1' } } } },
      metadata: [version('v1'), version('v2'), version('v1')],
    };
    await withBalanced(setup, async (b) => {
      await sendSequentially(b, 30);
      const counts = b.counts();
      assert.equal(counts[1], 0, `counts ${counts.join(', ')}`);
      // Round robin inside the subset: both v1 hosts take about half.
      assert.ok(counts[0]! >= 10 && counts[2]! >= 10, `counts ${counts.join(', ')}`);
      assert.equal(await b.proxy.stat('cluster.backend.lb_subsets_selected'), 30);
      // Each worker keeps its own subsets and counts them in the cluster's gauge, as each of Envoy's threads does.
      // A worker may still be building its clusters when one worker alone has served the 30 requests.
      const expected = 2 * b.workers.length;
      await waitFor(`lb_subsets_active ${expected}`, async () => ((await b.proxy.stat('cluster.backend.lb_subsets_active')) === expected ? true : undefined), 10_000);
    });
  });
});
