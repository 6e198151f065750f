import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { clusterRoute, httpConnectionManager, listener, startDataPlane, staticCluster, virtualHost } from '../helpers/data_plane';
import { request, startUpstream, type Upstream } from '../helpers/http_peers';
import type { HashPolicy } from '../../src/config/model';

const TIMEOUT = { timeout: 20000 };

/** Four upstreams behind one RING_HASH cluster `ring`, routed to with `hashPolicies`. */
async function ringHashProxy(t: TestContext, hashPolicies: HashPolicy[]) {
  const upstreams = await Promise.all(['u0', 'u1', 'u2', 'u3'].map((name) => upstream(t, name)));
  const routes = [virtualHost('all', ['*'], [clusterRoute({ prefix: '/' }, 'ring', { hashPolicies })])];
  const cluster = staticCluster(
    'ring',
    upstreams.map((u) => ({ port: u.port })),
    { lbPolicy: 'RING_HASH' },
  );
  const dp = await startDataPlane([listener('http', httpConnectionManager(routes))], [cluster]);
  t.after(() => dp.close());
  return dp.port('http');
}

async function upstreamOf(port: number, headers: Record<string, string>, path = '/'): Promise<string> {
  const reply = await request(port, { path, headers });
  assert.equal(reply.status, 200);
  return JSON.parse(reply.body).upstream;
}

async function upstream(t: TestContext, name: string): Promise<Upstream> {
  const u = await startUpstream(name);
  t.after(() => u.close());
  return u;
}

test('weighted_clusters: requests go to the entry their draw falls in, with its upstream stats', TIMEOUT, async (t) => {
  const blue = await upstream(t, 'blue');
  const green = await upstream(t, 'green');
  const routes = [
    virtualHost('all', ['*'], [
      clusterRoute({ prefix: '/' }, '', {
        weightedClusters: {
          totalWeight: 10,
          clusters: [
            { name: 'blue', weight: 0, runtimeKey: '.blue' },
            { name: 'green', weight: 10, runtimeKey: '.green', metadataMatch: [{ name: 'version', value: 'v2' }] },
          ],
        },
      }),
    ]),
  ];
  const dp = await startDataPlane([listener('http', httpConnectionManager(routes))], [staticCluster('blue', [{ port: blue.port }]), staticCluster('green', [{ port: green.port }])]);
  t.after(() => dp.close());
  for (let i = 0; i < 5; i++) {
    const reply = await request(dp.port('http'), { path: `/r${i}` });
    assert.equal(reply.status, 200);
    assert.equal(JSON.parse(reply.body).upstream, 'green');
  }
  assert.equal(blue.seen.length, 0);
  assert.equal(dp.stat('cluster.green.upstream_rq_200'), 5);
  assert.equal(dp.stat('cluster.blue.upstream_rq_total'), 0);
  assert.equal(dp.stat('http.ingress_http.rq_total'), 5);
});

test('a cookie hash policy makes no cookie for a balancer that does not hash (Envoy computes the hash on demand)', TIMEOUT, async (t) => {
  const web = await upstream(t, 'web');
  const routes = [
    virtualHost('all', ['*'], [
      clusterRoute({ prefix: '/' }, 'web', {
        hashPolicies: [
          { kind: 'cookie', name: 'sticky', ttlSeconds: 60, path: '/', terminal: false },
          { kind: 'source_ip', terminal: true },
        ],
      }),
    ]),
  ];
  const dp = await startDataPlane([listener('http', httpConnectionManager(routes))], [staticCluster('web', [{ port: web.port }])]);
  t.after(() => dp.close());
  const reply = await request(dp.port('http'), { headers: { cookie: 'other=1' } });
  assert.equal(reply.status, 200);
  assert.equal(JSON.parse(reply.body).upstream, 'web');
  assert.equal(reply.headers['set-cookie'], undefined);
});

test('a header hash policy on a RING_HASH cluster: one user, one upstream; many users, several', TIMEOUT, async (t) => {
  const port = await ringHashProxy(t, [{ kind: 'header', name: 'x-user', terminal: false }]);
  const chosen = new Set<string>();
  for (let user = 0; user < 16; user++) {
    const first = await upstreamOf(port, { 'x-user': `user-${user}` });
    for (let again = 0; again < 3; again++) assert.equal(await upstreamOf(port, { 'x-user': `user-${user}` }, `/again${again}`), first, `user-${user}`);
    chosen.add(first);
  }
  // 16 users on a ring of 4 equal hosts: all on one host has odds of 4 * 4^-16.
  assert.ok(chosen.size > 1, [...chosen].join());
});

test('a cookie hash policy with a ttl: the response sets the cookie, and the cookie keeps the client on its upstream', TIMEOUT, async (t) => {
  const port = await ringHashProxy(t, [{ kind: 'cookie', name: 'sticky', ttlSeconds: 3600, path: '/', terminal: false }]);
  const first = await request(port, { path: '/' });
  assert.equal(first.status, 200);
  const setCookie = first.headers['set-cookie'];
  assert.ok(setCookie !== undefined && setCookie.length === 1, String(setCookie));
  const match = /^sticky="([0-9a-f]{16})"; Max-Age=3600; Path=\/; HttpOnly$/.exec(setCookie[0]);
  assert.ok(match !== null, setCookie[0]);
  const upstreamName = JSON.parse(first.body).upstream;
  // The client sends the cookie back: it lands where the first request did, and no new cookie is set.
  for (let i = 0; i < 4; i++) {
    const again = await request(port, { path: `/next${i}`, headers: { cookie: `sticky="${match[1]}"` } });
    assert.equal(JSON.parse(again.body).upstream, upstreamName);
    assert.equal(again.headers['set-cookie'], undefined);
  }
});
