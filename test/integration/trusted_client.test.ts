// The request's trusted client through the real binary, over HTTP/1.1 and h2c alike: which
// address use_remote_address and xff_num_trusted_hops make it (the access log prints it), and
// what internal and edge requests carry upstream (x-proxy-internal, x-proxy-external-address)
// or lose (steering and node headers), as Envoy 1.16's connection manager does.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import { listenerClients, startUpstream, type Upstream } from '../helpers/http_peers';
import { readLines } from '../helpers/log_lines';
import { makeTempDir, type RunningProxy, startProxy, waitFor } from '../helpers/proxy_process';

const TIMEOUT = { timeout: 30_000 };
const ROUTES = [{ match: { prefix: '/' }, route: { cluster: 'web' } }];
const FILE_LOG = 'type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog';

describe('the trusted client on HTTP/1.1 and h2c', TIMEOUT, () => {
  let upstream: Upstream;
  let proxy: RunningProxy;
  let logDir: string | undefined;
  let logPath: string;
  const ports: Record<string, number> = {};
  const clients = listenerClients(ports);

  before(async () => {
    upstream = await startUpstream('web', (req, res) => res.end(JSON.stringify(req.headers)));
    logDir = makeTempDir();
    logPath = path.join(logDir, 'access.log');
    // Each line names its listener and the request's tag, so that lines are found whatever their order.
    const accessLog = [{ name: 'proxy.access_loggers.file', typed_config: { '@type': FILE_LOG, path: logPath, format: '%REQ(X-TAG)% %DOWNSTREAM_REMOTE_ADDRESS%\n' } }];
    const listeners = [
      httpListener('edge', 0, ROUTES, { use_remote_address: true, xff_num_trusted_hops: 1, access_log: accessLog }),
      httpListener('inner', 0, ROUTES, { xff_num_trusted_hops: 1, access_log: accessLog }),
    ];
    proxy = await startProxy({ static_resources: { listeners, clusters: [localCluster('web', upstream.port)] } }, ['--file-flush-interval-msec', '20']);
    for (const name of ['edge', 'inner']) {
      ports[name] = await proxy.listenerPort(name);
    }
  });

  after(async () => {
    clients.close();
    await proxy?.cleanup();
    await upstream?.close();
    if (logDir !== undefined) fs.rmSync(logDir, { recursive: true, force: true });
  });

  for (const [protocol, send] of clients.protocols) {
    const upstreamSaw = async (listener: string, tag: string, headers: Record<string, string>): Promise<Record<string, string | undefined>> => {
      const reply = await send(listener, { path: '/', headers: { 'x-tag': `${protocol}-${tag}`, ...headers } });
      assert.equal(reply.status, 200);
      return JSON.parse(reply.body) as Record<string, string | undefined>;
    };
    const logged = async (tag: string): Promise<string> => {
      const prefix = `${protocol}-${tag} `;
      const line = await waitFor(`the access log line of ${prefix}`, () => readLines(logPath).find((l) => l.startsWith(prefix)));
      return line.slice(prefix.length);
    };

    test(`${protocol}: an edge request behind one trusted hop: its client from x-forwarded-for, told upstream, its own say dropped`, async () => {
      const seen = await upstreamSaw('edge', 'outside', {
        'x-forwarded-for': '198.51.100.7',
        'x-proxy-internal': 'true',
        'x-proxy-external-address': '10.9.9.9',
        'x-proxy-force-trace': '1',
        'x-proxy-downstream-service-node': 'spoofed',
        'x-proxy-upstream-alt-stat-name': 'alt',
      });
      assert.equal(seen['x-proxy-external-address'], '198.51.100.7');
      assert.match(String(seen['x-forwarded-for']), /^198\.51\.100\.7, /);
      assert.equal(seen['x-forwarded-proto'], 'http');
      for (const name of ['x-proxy-internal', 'x-proxy-force-trace', 'x-proxy-downstream-service-node', 'x-proxy-upstream-alt-stat-name']) assert.equal(seen[name], undefined, name);
      assert.equal(await logged('outside'), '198.51.100.7:0');
    });

    test(`${protocol}: a request from inside (a loopback peer, no x-forwarded-for) is internal`, async () => {
      const seen = await upstreamSaw('edge', 'inside', { 'x-proxy-force-trace': '1', 'x-proxy-external-address': '10.9.9.9' });
      assert.equal(seen['x-proxy-internal'], 'true');
      assert.equal(seen['x-proxy-force-trace'], '1');
      // Not an edge request: what a proxy in front said of the client passes on.
      assert.equal(seen['x-proxy-external-address'], '10.9.9.9');
      assert.match(await logged('inside'), /^127\.0\.0\.1:\d+$/);
    });

    test(`${protocol}: behind a trusted edge, the entry before the trusted hop is the client; too few entries leave the peer`, async () => {
      const seen = await upstreamSaw('inner', 'behind', { 'x-forwarded-for': '198.51.100.7, 10.0.0.1', 'x-proxy-force-trace': '1' });
      assert.equal(seen['x-forwarded-for'], '198.51.100.7, 10.0.0.1');
      assert.deepEqual([seen['x-proxy-internal'], seen['x-proxy-external-address'], seen['x-proxy-force-trace']], [undefined, undefined, undefined]);
      assert.equal(await logged('behind'), '198.51.100.7:0');
      await upstreamSaw('inner', 'short', { 'x-forwarded-for': '198.51.100.7' });
      assert.match(await logged('short'), /^127\.0\.0\.1:\d+$/);
    });
  }
});
