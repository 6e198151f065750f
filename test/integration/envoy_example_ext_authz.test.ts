// Envoy 1.16's examples/ext_authz, as its README runs it: each of the example's bootstraps
// (config/http-service.yaml, config/grpc-service/v2.yaml and v3.yaml; their listener and
// clusters pointed at 127.0.0.1) in front of an upstream that greets the x-current-user it is
// sent, and an authorization server of the test's own that behaves as the example's: a request
// with `Authorization: Bearer <token>` of a token in the users file is allowed with
// x-current-user set to the token's user (the gRPC server with `append: false`); anything else
// is refused (403; the gRPC server PERMISSION_DENIED without a denied_response). The README's
// flow: `curl localhost:8000/service` is 403, with `Bearer token1` it is "Hello user1 from behind
// Envoy!".

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as yaml from 'js-yaml';
import * as protojson from 'protobufjs/ext/protojson';
import { after, before, describe, test } from 'node:test';
import { protoSchema } from '../../src/config/schema';
import { closeServer, listen, request, startUpstream, type Upstream } from '../helpers/http_peers';
import { listenerPorts, makeTempDir, type RunningProxy, startProxy } from '../helpers/proxy_process';

const TIMEOUT = { timeout: 60_000 };

/** The listener and the upstream service's cluster, as the example's bootstraps have them; UPSTREAM_PORT stands for the test's. */
const BOOTSTRAP_HEAD = `
static_resources:
  listeners:
  - address:
      socket_address:
        address: 127.0.0.1
        port_value: 0
    filter_chains:
    - filters:
      - name: envoy.filters.network.http_connection_manager
        typed_config:
          "@type": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
          codec_type: auto
          stat_prefix: ingress_http
          route_config:
            name: local_route
            virtual_hosts:
            - name: upstream
              domains:
              - "*"
              routes:
              - match:
                  prefix: "/"
                route:
                  cluster: upstream-service
          http_filters:
FILTER
          - name: envoy.filters.http.router
            typed_config: {}

  clusters:
  - name: upstream-service
    connect_timeout: 0.250s
    type: STRICT_DNS
    lb_policy: ROUND_ROBIN
    load_assignment:
      cluster_name: upstream-service
      endpoints:
      - lb_endpoints:
        - endpoint:
            address:
              socket_address:
                address: 127.0.0.1
                port_value: UPSTREAM_PORT
`;

/** config/http-service.yaml's filter and authorization cluster; AUTHZ_PORT stands for the test's server. */
const HTTP_SERVICE = BOOTSTRAP_HEAD.replace(
  'FILTER',
  `          - name: envoy.filters.http.ext_authz
            typed_config:
              "@type": type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthz
              http_service:
                server_uri:
                  uri: ext_authz
                  cluster: ext_authz-http-service
                  timeout: 0.250s
                authorization_response:
                  allowed_upstream_headers:
                    patterns:
                    - exact: x-current-user`,
) + `
  - name: ext_authz-http-service
    connect_timeout: 0.250s
    type: STRICT_DNS
    lb_policy: ROUND_ROBIN
    load_assignment:
      cluster_name: ext_authz-http-service
      endpoints:
      - lb_endpoints:
        - endpoint:
            address:
              socket_address:
                address: 127.0.0.1
                port_value: AUTHZ_PORT
`;

/** config/grpc-service/<version>.yaml's filter and authorization cluster. */
const grpcService = (version: 'V2' | 'V3'): string =>
  BOOTSTRAP_HEAD.replace(
    'FILTER',
    `          - name: envoy.filters.http.ext_authz
            typed_config:
              "@type": type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthz
              grpc_service:
                envoy_grpc:
                  cluster_name: ext_authz-grpc-service
                timeout: 0.250s
              transport_api_version: ${version}`,
  ) + `
  - name: ext_authz-grpc-service
    connect_timeout: 0.250s
    type: STRICT_DNS
    lb_policy: ROUND_ROBIN
    http2_protocol_options: {}
    load_assignment:
      cluster_name: ext_authz-grpc-service
      endpoints:
      - lb_endpoints:
        - endpoint:
            address:
              socket_address:
                address: 127.0.0.1
                port_value: AUTHZ_PORT
`;

/** The user of `Bearer <token>` in the users file; undefined for anything else. */
function userOf(usersFile: string, authorization: string | undefined): string | undefined {
  const users = JSON.parse(fs.readFileSync(usersFile, 'utf8')) as Record<string, string>;
  const [scheme, token, ...rest] = (authorization ?? '').trim().split(/\s+/);
  return scheme === 'Bearer' && token !== undefined && rest.length === 0 && Object.hasOwn(users, token) ? users[token] : undefined;
}

/** auth/http-service: 200 with x-current-user, else 403. */
async function httpAuthServer(usersFile: string): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const user = userOf(usersFile, req.headers.authorization);
      res.writeHead(user === undefined ? 403 : 200, user === undefined ? {} : { 'x-current-user': user });
      res.end();
    });
  });
  const port = await listen(server);
  return { port, close: () => closeServer(server) };
}

/** auth/grpc-service, v2 and v3: OK with x-current-user (append false), else PERMISSION_DENIED. */
async function grpcAuthServer(usersFile: string): Promise<{ port: number; paths: string[]; close(): void }> {
  const server = new grpc.Server();
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  const root = protoSchema().root;
  const requestType = root.lookupType('envoy.service.auth.v3.CheckRequest');
  const responseType = root.lookupType('envoy.service.auth.v3.CheckResponse');
  const paths: string[] = [];
  const identity = (bytes: Buffer) => bytes;
  const methods = ['/envoy.service.auth.v2.Authorization/Check', '/envoy.service.auth.v3.Authorization/Check'];
  const definition: grpc.ServiceDefinition = Object.fromEntries(
    methods.map((p) => [p, { path: p, requestStream: false, responseStream: false, requestSerialize: identity, requestDeserialize: identity, responseSerialize: identity, responseDeserialize: identity }]),
  );
  const handler = (p: string) => (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
    paths.push(p);
    const checked = protojson.toJson(requestType, requestType.decode(call.request)) as { attributes: { request: { http: { headers: Record<string, string> } } } };
    const user = userOf(usersFile, checked.attributes.request.http.headers['authorization']);
    const response =
      user === undefined ? { status: { code: 7 } } : { status: { code: 0 }, ok_response: { headers: [{ append: false, header: { key: 'x-current-user', value: user } }] } };
    callback(null, Buffer.from(responseType.encode(protojson.fromJson(responseType, response)).finish()));
  };
  server.addService(definition, Object.fromEntries(methods.map((p) => [p, handler(p)])));
  return { port, paths, close: () => server.forceShutdown() };
}

describe("Envoy 1.16's ext_authz example", TIMEOUT, () => {
  let upstream: Upstream;
  let dir: string;
  let usersFile: string;

  before(async () => {
    dir = makeTempDir();
    usersFile = path.join(dir, 'users.json');
    fs.writeFileSync(usersFile, JSON.stringify({ token1: 'user1', token2: 'user2', token3: 'user3' }));
    // upstream/service: greets the user the authorization server named.
    upstream = await startUpstream('upstream-service', (req, res) => res.end(`Hello ${req.headers['x-current-user']} from behind Envoy!`));
  });

  after(async () => {
    await upstream?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Starts the proxy on `bootstrap`; resolves to its listener's port and a stop. */
  async function serve(bootstrap: string, authzPort: number): Promise<{ port: number; proxy: RunningProxy }> {
    const config = yaml.load(bootstrap.replace('UPSTREAM_PORT', String(upstream.port)).replace('AUTHZ_PORT', String(authzPort))) as Record<string, unknown>;
    const proxy = await startProxy(config);
    // The example's listener has no name: its port is the one /listeners shows.
    const [port] = (await listenerPorts(proxy)) as [number];
    return { port, proxy };
  }

  /** The README's two curls, and a token of another user, and one the users file lacks. */
  async function readmeFlow(port: number): Promise<void> {
    const anonymous = await request(port, { path: '/service' });
    assert.deepEqual([anonymous.status, anonymous.body], [403, '']);
    const user1 = await request(port, { path: '/service', headers: { authorization: 'Bearer token1' } });
    assert.deepEqual([user1.status, user1.body], [200, 'Hello user1 from behind Envoy!']);
    assert.equal((await request(port, { path: '/service', headers: { authorization: 'Bearer token3' } })).body, 'Hello user3 from behind Envoy!');
    assert.equal((await request(port, { path: '/service', headers: { authorization: 'Bearer token9' } })).status, 403);
  }

  test('config/http-service.yaml', async () => {
    const authz = await httpAuthServer(usersFile);
    const { port, proxy } = await serve(HTTP_SERVICE, authz.port);
    try {
      await readmeFlow(port);
      assert.deepEqual([await proxy.stat('http.ingress_http.ext_authz.ok'), await proxy.stat('http.ingress_http.ext_authz.denied')], [2, 2]);
    } finally {
      await proxy.cleanup();
      await authz.close();
    }
  });

  for (const version of ['V2', 'V3'] as const) {
    test(`config/grpc-service/${version.toLowerCase()}.yaml`, async () => {
      const authz = await grpcAuthServer(usersFile);
      const { port, proxy } = await serve(grpcService(version), authz.port);
      try {
        await readmeFlow(port);
        assert.deepEqual(new Set(authz.paths), new Set([`/envoy.service.auth.${version.toLowerCase()}.Authorization/Check`]));
      } finally {
        await proxy.cleanup();
        authz.close();
      }
    });
  }
});
