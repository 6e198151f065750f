// A v2 route's `host_rewrite`, as Envoy's own v2 examples write it, reaches the upstream as its
// Host.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { localCluster } from '../helpers/config_fixtures';
import { closeServer, request, startUpstream, type Upstream } from '../helpers/http_peers';
import { type RunningProxy, startProxy } from '../helpers/proxy_process';

const TIMEOUT = { timeout: 60_000 };

describe('a v2 route\'s host_rewrite', TIMEOUT, () => {
  let upstream: Upstream;
  let proxy: RunningProxy;

  before(async () => {
    upstream = await startUpstream('web');
    const routes = [
      { match: { prefix: '/rewritten' }, route: { cluster: 'web', host_rewrite: 'internal.example' } },
      { match: { prefix: '/' }, route: { cluster: 'web' } },
    ];
    proxy = await startProxy({
      static_resources: {
        listeners: [
          {
            name: 'http_in',
            address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
            filter_chains: [
              {
                filters: [
                  {
                    name: 'envoy.http_connection_manager',
                    config: {
                      stat_prefix: 'ingress_http',
                      route_config: { virtual_hosts: [{ name: 'all', domains: ['*'], routes }] },
                      http_filters: [{ name: 'envoy.router' }],
                    },
                  },
                ],
              },
            ],
          },
        ],
        clusters: [localCluster('web', upstream.port)],
      },
    });
  });

  after(async () => {
    await proxy?.cleanup();
    if (upstream !== undefined) await closeServer(upstream.server);
  });

  test('is the upstream request\'s Host; other routes keep the client\'s', async () => {
    const port = await proxy.listenerPort('http_in');
    const rewritten = await request(port, { path: '/rewritten', headers: { host: 'front.example' } });
    assert.equal(rewritten.status, 200);
    const kept = await request(port, { path: '/kept', headers: { host: 'front.example' } });
    assert.equal(kept.status, 200);
    assert.deepEqual(
      upstream.seen.map((seen) => [seen.url, seen.headers.host]),
      [
        ['/rewritten', 'internal.example'],
        ['/kept', 'front.example'],
      ],
    );
  });
});
