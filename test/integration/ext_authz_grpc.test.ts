// proxy.filters.http.ext_authz with a gRPC authorization service (@grpc/grpc-js, h2c), through
// the real binary over HTTP/1.1 and h2c: transport_api_version V2 (the default) and V3 call their
// own Check method; the CheckRequest carries the peers, the request's HTTP attributes and the
// route's context extensions (the virtual host's merged under the route's); an OK answer's
// headers are set or appended upstream and its dynamic metadata recorded; a denial answers with
// denied_response's status, headers and body (403 without one); a service that is down is an
// error; access logs read the flags (UAEX), the details and the metadata.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protojson from 'protobufjs/ext/protojson';
import { after, before, describe, test } from 'node:test';
import { protoSchema } from '../../src/config/schema';
import type { Json } from '../helpers/config_fixtures';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import { listenerClients, startUpstream, type Upstream } from '../helpers/http_peers';
import { refusedPort } from '../helpers/refused_port';
import { makeTempDir, type RunningProxy, startProxy, waitFor } from '../helpers/proxy_process';

const TIMEOUT = { timeout: 60_000 };
const EXT_AUTHZ_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthz';
const PER_ROUTE_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthzPerRoute';
const FILE_LOG = 'type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog';
const CHECK_PATHS = ['/envoy.service.auth.v2.Authorization/Check', '/envoy.service.auth.v3.Authorization/Check'];

interface Checked {
  readonly path: string;
  readonly request: Json;
}

/** The Authorization service of both versions: its answer is the request's Bearer token's. */
async function authorizationServer(): Promise<{ port: number; seen: Checked[]; close(): void }> {
  const server = new grpc.Server();
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  const root = protoSchema().root;
  const requestType = root.lookupType('envoy.service.auth.v3.CheckRequest');
  const responseType = root.lookupType('envoy.service.auth.v3.CheckResponse');
  const seen: Checked[] = [];
  const identity = (bytes: Buffer) => bytes;
  const definition: grpc.ServiceDefinition = Object.fromEntries(
    CHECK_PATHS.map((p) => [p, { path: p, requestStream: false, responseStream: false, requestSerialize: identity, requestDeserialize: identity, responseSerialize: identity, responseDeserialize: identity }]),
  );
  const handler = (p: string) => (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
    const request = protojson.toJson(requestType, requestType.decode(call.request)) as Json;
    seen.push({ path: p, request });
    const answer = (response: Json) => callback(null, Buffer.from(responseType.encode(protojson.fromJson(responseType, response)).finish()));
    switch (request.attributes.request.http.headers.authorization) {
      case 'Bearer allow':
        answer({
          status: { code: 0 },
          ok_response: { headers: [{ header: { key: 'x-authz-user', value: 'alice' } }, { header: { key: 'x-appended', value: 'more' }, append: true }, { header: { key: 'x-absent', value: 'no' }, append: true }] },
          dynamic_metadata: { user: 'alice' },
        });
        break;
      case 'Bearer bare':
        answer({ status: { code: 7 } });
        break;
      default:
        answer({ status: { code: 16 }, denied_response: { status: { code: 'Unauthorized' }, headers: [{ header: { key: 'x-deny-reason', value: 'bad token' } }], body: 'go away' } });
    }
  };
  server.addService(definition, Object.fromEntries(CHECK_PATHS.map((p) => [p, handler(p)])));
  return { port, seen, close: () => server.forceShutdown() };
}

function listener(name: string, filter: Json, accessLogPath: string): Json {
  const perRoute = (extensions: Json): Json => ({ 'envoy.filters.http.ext_authz': { '@type': PER_ROUTE_TYPE, check_settings: { context_extensions: extensions } } });
  const routes = [
    { match: { prefix: '/ctx' }, route: { cluster: 'web' }, typed_per_filter_config: perRoute({ route: 'ctx', shared: 'route' }) },
    { match: { prefix: '/' }, route: { cluster: 'web' } },
  ];
  const config = httpListener(name, 0, routes, {
    stat_prefix: name,
    http_filters: [{ name: 'envoy.filters.http.ext_authz', typed_config: { '@type': EXT_AUTHZ_TYPE, ...filter } }, { name: 'envoy.filters.http.router' }],
    access_log: [
      {
        name: 'envoy.access_loggers.file',
        typed_config: { '@type': FILE_LOG, path: accessLogPath, format: '%REQ(:PATH)% %RESPONSE_CODE% %RESPONSE_FLAGS% %RESPONSE_CODE_DETAILS% %DYNAMIC_METADATA(envoy.filters.http.ext_authz:user)%\n' },
      },
    ],
  });
  config.filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].typed_per_filter_config = perRoute({ vhost: 'all', shared: 'vhost' });
  return config;
}

describe('ext_authz with a gRPC service, over HTTP/1.1 and h2c', TIMEOUT, () => {
  let upstream: Upstream;
  let authz: Awaited<ReturnType<typeof authorizationServer>>;
  let proxy: RunningProxy;
  const dir = makeTempDir();
  const logPath = path.join(dir, 'access.log');
  const ports: Record<string, number> = {};
  const clients = listenerClients(ports);

  before(async () => {
    upstream = await startUpstream('web');
    authz = await authorizationServer();
    // The service is down: nothing listens on its port.
    const downPort = await refusedPort();
    const grpcService = (cluster: string): Json => ({ envoy_grpc: { cluster_name: cluster }, timeout: '1s' });
    const listeners = [
      listener('v2', { grpc_service: grpcService('authz') }, logPath),
      listener('v3', { grpc_service: grpcService('authz'), transport_api_version: 'V3' }, logPath),
      listener('down', { grpc_service: grpcService('authz_down'), transport_api_version: 'V3' }, logPath),
    ];
    const h2 = (cluster: Json): Json => ({ ...cluster, http2_protocol_options: {} });
    const clusters = [localCluster('web', upstream.port), h2(localCluster('authz', authz.port)), h2(localCluster('authz_down', downPort))];
    proxy = await startProxy({ static_resources: { listeners, clusters } }, ['--file-flush-interval-msec', '50']);
    for (const name of ['v2', 'v3', 'down']) ports[name] = await proxy.listenerPort(name);
  });

  after(async () => {
    clients.close();
    await proxy?.cleanup();
    await upstream?.close();
    authz?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  for (const [protocol, send] of clients.protocols) {
    for (const version of ['v2', 'v3']) {
      test(`${protocol}, ${version}: an allowed request goes on with ok_response's headers; the CheckRequest is Envoy's`, async () => {
        const before = authz.seen.length;
        const reply = await send(version, { path: '/ctx/a?b=c', headers: { authorization: 'Bearer allow', 'x-appended': 'orig', 'x-proxy-downstream-service-cluster': 'front' } });
        assert.equal(reply.status, 200);
        const seenUpstream = JSON.parse(reply.body);
        assert.equal(seenUpstream.headers['x-authz-user'], 'alice');
        assert.equal(seenUpstream.headers['x-appended'], 'orig,more');
        assert.equal(seenUpstream.headers['x-absent'], undefined);
        const { path: called, request } = authz.seen[before]!;
        assert.equal(called, `/envoy.service.auth.${version}.Authorization/Check`);
        const { source, destination, request: attributes, contextExtensions } = request.attributes;
        assert.equal(source.address.socketAddress.address, '127.0.0.1');
        assert.equal(source.service, 'front');
        assert.deepEqual(destination.address.socketAddress, { address: '127.0.0.1', portValue: ports[version] });
        assert.ok(Math.abs(Date.parse(attributes.time) - Date.now()) < 10_000);
        const http = attributes.http;
        assert.match(http.id, /^\d+$/);
        assert.deepEqual([http.method, http.path, http.host], ['GET', '/ctx/a?b=c', `127.0.0.1:${ports[version]}`]);
        assert.equal(http.protocol, protocol === 'h2c' ? 'HTTP/2' : 'HTTP/1.1');
        assert.equal(http.scheme ?? '', protocol === 'h2c' ? 'http' : '');
        assert.equal(http.headers[':path'], '/ctx/a?b=c');
        assert.equal(http.headers[':method'], 'GET');
        assert.equal(http.headers['authorization'], 'Bearer allow');
        assert.ok(http.headers['x-request-id']);
        assert.deepEqual(contextExtensions, { vhost: 'all', route: 'ctx', shared: 'route' });
      });

      test(`${protocol}, ${version}: a denial answers with denied_response; a denial without one is 403`, async () => {
        const seen = upstream.seen.length;
        const denied = await send(version, { path: '/', headers: { authorization: 'Bearer nope' } });
        assert.deepEqual([denied.status, denied.body, denied.headers['x-deny-reason']], [401, 'go away', 'bad token']);
        const bare = await send(version, { path: '/', headers: { authorization: 'Bearer bare' } });
        assert.deepEqual([bare.status, bare.body], [403, '']);
        assert.equal(upstream.seen.length, seen);
      });
    }

    test(`${protocol}: a service that is down is an error: 403`, async () => {
      const reply = await send('down', { path: '/', headers: { authorization: 'Bearer allow' } });
      assert.deepEqual([reply.status, reply.body], [403, '']);
    });
  }

  test('the counters, and what the access log reads: UAEX, the details, the dynamic metadata', async () => {
    assert.deepEqual(await Promise.all(['ok', 'denied', 'error'].map((n) => proxy.stat(`http.v3.ext_authz.${n}`))), [2, 4, 0]);
    assert.deepEqual(await Promise.all(['ok', 'denied', 'error'].map((n) => proxy.stat(`http.down.ext_authz.${n}`))), [0, 0, 2]);
    assert.equal(await proxy.stat('cluster.web.ext_authz.denied'), 8);
    const lines = await waitFor('the access log', () => {
      const text = fs.existsSync(logPath) ? fs.readFileSync(logPath, 'utf8') : '';
      return text.split('\n').length > 14 ? text : undefined;
    });
    assert.match(lines, /^\/ctx\/a\?b=c 200 - via_upstream "alice"$/m);
    assert.match(lines, /^\/ 401 UAEX ext_authz_denied -$/m);
    assert.match(lines, /^\/ 403 UAEX ext_authz_error -$/m);
  });
});
