// What the connection manager does to a request's identity and path and to a response's server
// and via headers, through the real binary over HTTP/1.1 and h2c alike: x-request-id made,
// kept or replaced (generate_request_id, preserve_external_request_id), skip_xff_append, via,
// server_header_transformation, normalize_path, merge_slashes and add_user_agent.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import { listenerClients, startUpstream, type Upstream } from '../helpers/http_peers';
import { type RunningProxy, startProxy } from '../helpers/proxy_process';

const TIMEOUT = { timeout: 30_000 };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ROUTES = [{ match: { prefix: '/missing' }, direct_response: { status: 404 } }, { match: { prefix: '/' }, route: { cluster: 'web' } }];

interface Seen {
  readonly url: string;
  readonly headers: Record<string, string | undefined>;
}

describe('request identity, forwarding headers and path rewriting on HTTP/1.1 and h2c', TIMEOUT, () => {
  let upstream: Upstream;
  let proxy: RunningProxy;
  const ports: Record<string, number> = {};
  const clients = listenerClients(ports);

  before(async () => {
    // Answers with what it was sent; /named answers with its own server and via headers.
    upstream = await startUpstream('web', (req, res) => {
      if (req.url === '/named') res.setHeader('server', 'upstream-server');
      res.setHeader('via', '1.1 upstream');
      res.end(JSON.stringify({ url: req.url, headers: req.headers }));
    });
    const listeners = [
      httpListener('plain', 0, ROUTES, { server_header_transformation: 'PASS_THROUGH' }),
      httpListener('edge', 0, ROUTES, {
        use_remote_address: true,
        skip_xff_append: true,
        via: 'edge-proxy',
        server_header_transformation: 'APPEND_IF_ABSENT',
        normalize_path: true,
        merge_slashes: true,
      }),
      httpListener('preserving', 0, ROUTES, { use_remote_address: true, preserve_external_request_id: true }),
      httpListener('no-ids', 0, ROUTES, { generate_request_id: false }),
      httpListener('agent', 0, ROUTES, { add_user_agent: true }),
    ];
    proxy = await startProxy({ node: { id: 'node-7', cluster: 'front' }, static_resources: { listeners, clusters: [localCluster('web', upstream.port)] } });
    for (const name of ['plain', 'edge', 'preserving', 'no-ids', 'agent']) {
      ports[name] = await proxy.listenerPort(name);
    }
  });

  after(async () => {
    clients.close();
    await proxy?.cleanup();
    await upstream?.close();
  });

  for (const [protocol, send] of clients.protocols) {
    const seen = async (listener: string, path: string, headers: Record<string, string> = {}): Promise<Seen> => {
      const reply = await send(listener, { path, headers });
      assert.equal(reply.status, 200, `${listener} ${path}`);
      return JSON.parse(reply.body) as Seen;
    };

    test(`${protocol}: x-request-id is made, kept, replaced at the edge, or left alone`, async () => {
      assert.match(String((await seen('plain', '/')).headers['x-request-id']), UUID);
      assert.equal((await seen('plain', '/', { 'x-request-id': 'mine' })).headers['x-request-id'], 'mine');
      // From outside (it came with x-forwarded-for) to an edge listener: replaced.
      const external = { 'x-request-id': 'mine', 'x-forwarded-for': '203.0.113.9' };
      assert.match(String((await seen('edge', '/', external)).headers['x-request-id']), UUID);
      assert.equal((await seen('preserving', '/', external)).headers['x-request-id'], 'mine');
      // From inside (a loopback peer, no x-forwarded-for): kept even at the edge.
      assert.equal((await seen('edge', '/', { 'x-request-id': 'mine' })).headers['x-request-id'], 'mine');
      assert.equal((await seen('no-ids', '/')).headers['x-request-id'], undefined);
    });

    test(`${protocol}: skip_xff_append, via both ways, and the server header`, async () => {
      const edge = await send('edge', { path: '/', headers: { 'x-forwarded-for': '203.0.113.9', via: '1.0 client' } });
      const forwarded = JSON.parse(edge.body) as Seen;
      assert.equal(forwarded.headers['x-forwarded-for'], '203.0.113.9');
      assert.equal(forwarded.headers.via, '1.0 client, edge-proxy');
      assert.equal(edge.headers.via, '1.1 upstream, edge-proxy');
      // APPEND_IF_ABSENT: the upstream's own server stays; ours where it sent none, and on local replies.
      assert.equal(edge.headers.server, 'proxy');
      assert.equal((await send('edge', { path: '/named' })).headers.server, 'upstream-server');
      const local = await send('edge', { path: '/missing' });
      assert.deepEqual([local.status, local.headers.server, local.headers.via], [404, 'proxy', 'edge-proxy']);
      // PASS_THROUGH: only what the upstream sent.
      assert.equal((await send('plain', { path: '/' })).headers.server, undefined);
      assert.equal((await send('plain', { path: '/named' })).headers.server, 'upstream-server');
      assert.equal((await send('plain', { path: '/missing' })).headers.server, undefined);
    });

    test(`${protocol}: add_user_agent names the node's cluster and id, and a user-agent when there is none`, async () => {
      const bare = (await seen('agent', '/')).headers;
      assert.deepEqual(
        [bare['x-proxy-downstream-service-cluster'], bare['x-proxy-downstream-service-node'], bare['user-agent']],
        ['front', 'node-7', 'front'],
      );
      assert.equal((await seen('agent', '/', { 'user-agent': 'curl/8' })).headers['user-agent'], 'curl/8');
      const off = (await seen('plain', '/')).headers;
      assert.deepEqual([off['x-proxy-downstream-service-cluster'], off['x-proxy-downstream-service-node']], [undefined, undefined]);
    });

    test(`${protocol}: normalize_path and merge_slashes rewrite the path before routing`, async () => {
      assert.equal((await seen('edge', '/a/./b/../c//d?x=//y')).url, '/a/c/d?x=//y');
      // Normalized, /x/../missing is the direct response's route.
      assert.equal((await send('edge', { path: '/x/../missing' })).status, 404);
      assert.equal((await seen('plain', '/a/./b//c')).url, '/a/./b//c');
    });
  }
});
