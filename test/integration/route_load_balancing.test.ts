import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { clusterRoute, httpConnectionManager, listener, startDataPlane, staticCluster, virtualHost } from '../helpers/data_plane';
import { request, startUpstream, type Upstream } from '../helpers/http_peers';

const TIMEOUT = { timeout: 20000 };

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
