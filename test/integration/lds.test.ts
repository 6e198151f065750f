// LDS on a real proxy with two workers, from a file renamed into place and over ADS from a gRPC
// management server the test runs: a listener appears and takes traffic in both workers; it is
// changed (route and HTTP filters) under steady keep-alive load with no failed request, its old
// connections told to go (Connection: close on HTTP/1.1, GOAWAY on h2c) and its socket kept; a
// bad listener is refused by field path and the previous one keeps serving; a removed one stops
// accepting; over a file, ADS, delta xDS and REST. Warming on RDS, /drain_listeners and the
// in-place filter chain update too. Stats, /listeners and /config_dump follow.

import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as http2 from 'node:http2';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as tls from 'node:tls';
import { describe, test, type TestContext } from 'node:test';
import { type CertificateFiles, makeCa, makeLeaf } from '../helpers/certificates';
import { httpListener } from '../helpers/config_fixtures';
import { request, type RunningProxy, startProxy, waitFor } from '../helpers/proxy_process';
import { refuses } from '../helpers/refused_port';
import { namedUpstream, type NamedUpstream } from '../helpers/socket_owner';
import { XdsServer } from '../helpers/xds_server';
import type { JsonObject } from '../../src/config/json';

const TIMEOUT = { timeout: 120_000 };
const LISTENER_TYPE = 'type.googleapis.com/envoy.config.listener.v3.Listener';
const LISTENER_TYPE_V2 = 'type.googleapis.com/envoy.api.v2.Listener';
const FAULT_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault';
const ROUTER = { name: 'proxy.filters.http.router' };
/** A fault filter that aborts /faulty with 418 and nothing else: the changed listener's extra filter. */
const FAULT_FILTER = {
  name: 'envoy.filters.http.fault',
  typed_config: { '@type': FAULT_TYPE, abort: { http_status: 418, percentage: { numerator: 100 } }, headers: [{ name: ':path', exact_match: '/faulty' }] },
};
const DRAIN_ARGS = ['--concurrency', '2', '--drain-time-s', '1', '--drain-strategy', 'immediate'];

/** Listener `name` on 127.0.0.1:0, everything to `target`; `filters` before the router. */
function listener(name: string, target: string, filters: readonly JsonObject[] = [], port = 0): JsonObject {
  const routes = [{ match: { prefix: '/' }, route: { cluster: target }, response_headers_to_add: [{ header: { key: 'x-route', value: target } }] }];
  return { '@type': LISTENER_TYPE, ...httpListener(name, port, routes, { stat_prefix: name, http_filters: [...filters, ROUTER] }) };
}

function staticCluster(name: string, port: number, extra: JsonObject = {}): JsonObject {
  return {
    name,
    connect_timeout: '1s',
    load_assignment: { cluster_name: name, endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: port } } } }] }] },
    ...extra,
  };
}

function pushFile(file: string, version: string, resources: readonly JsonObject[]): void {
  const aside = `${file}.${version}.tmp`;
  fs.writeFileSync(aside, JSON.stringify({ version_info: version, resources }));
  fs.renameSync(aside, file);
}

/** The serial number of the certificate a new TLS connection to `port` is shown, lower case. */
function tlsSerial(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      resolve(socket.getPeerX509Certificate()?.serialNumber.toLowerCase() ?? '');
      socket.destroy();
    });
    socket.on('error', reject);
  });
}

function serialOf(file: string): string {
  return new X509Certificate(fs.readFileSync(file)).serialNumber.toLowerCase();
}

async function get(port: number, urlPath = '/'): Promise<{ status: number; body: string }> {
  const r = await request(`http://127.0.0.1:${port}${urlPath}`, { headers: { connection: 'close' } });
  return { status: r.status, body: r.body };
}

interface Upstreams {
  readonly b: NamedUpstream;
  readonly c: NamedUpstream;
  workers: number[];
}

async function upstreams(t: TestContext): Promise<Upstreams> {
  const state: { workers: number[] } = { workers: [] };
  const [b, c] = await Promise.all(['b', 'c'].map((name) => namedUpstream(name, () => state.workers)));
  t.after(() => {
    b!.server.close();
    c!.server.close();
  });
  return Object.assign(state, { b: b!, c: c! });
}

/** Requests, each on a connection of its own, until `upstream` has been reached from both workers. */
async function untilBothWorkersReach(port: number, upstream: NamedUpstream, workers: readonly number[], what: string): Promise<void> {
  await waitFor(
    what,
    async () => {
      for (let i = 0; i < 4; i++) await get(port);
      return workers.every((w) => upstream.seen.includes(w)) ? true : undefined;
    },
    30_000,
  );
}

/** Keep-alive HTTP/1.1 clients sending back to back until stopped: every answer and failure counted. */
class SteadyLoad {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  private running = true;
  readonly bodies = new Map<string, number>();
  readonly failures: string[] = [];
  closeHeaders = 0;
  private readonly loops: Promise<void>[];

  constructor(private readonly port: number) {
    this.loops = Array.from({ length: 4 }, () => this.loop());
  }

  private async loop(): Promise<void> {
    while (this.running) {
      try {
        const { body, close } = await this.once();
        this.bodies.set(body, (this.bodies.get(body) ?? 0) + 1);
        if (close) this.closeHeaders++;
      } catch (error) {
        this.failures.push((error as Error).message);
      }
    }
  }

  private once(): Promise<{ body: string; close: boolean }> {
    return new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: this.port, path: '/', agent: this.agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ body: Buffer.concat(chunks).toString(), close: res.headers.connection === 'close' }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.setTimeout(10_000, () => req.destroy(new Error('request timed out')));
      req.end();
    });
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
    this.agent.destroy();
  }
}

/** One h2c session kept open; it records a GOAWAY. */
class H2cClient {
  readonly session: http2.ClientHttp2Session;
  goaway = false;

  constructor(port: number) {
    this.session = http2.connect(`http://127.0.0.1:${port}`);
    this.session.on('goaway', () => (this.goaway = true));
    this.session.on('error', () => undefined);
  }

  get(): Promise<string> {
    return new Promise((resolve, reject) => {
      const stream = this.session.request({ ':path': '/' });
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => resolve(Buffer.concat(chunks).toString()));
      stream.on('error', reject);
      stream.setTimeout(10_000, () => stream.close(http2.constants.NGHTTP2_CANCEL));
      stream.end();
    });
  }
}

/** /config_dump's dynamic_listeners. */
async function dynamicListeners(proxy: RunningProxy): Promise<JsonObject[]> {
  const body = JSON.parse((await proxy.admin('/config_dump?resource=dynamic_listeners')).body) as { configs?: JsonObject[] };
  return body.configs ?? [];
}

/**
 * What both transports must do: `dyn` (to b) appears in both workers, is changed (to c, with a
 * fault filter) under load with no failed request and its socket kept, and its old connections go.
 */
async function appearsAndChanges(proxy: RunningProxy, up: Upstreams, push: (version: string, resources: JsonObject[]) => void): Promise<number> {
  const port = await waitFor('listener dyn in /listeners', () => proxy.listenerPort('dyn').catch(() => undefined));
  await untilBothWorkersReach(port, up.b, up.workers, 'both workers to serve the LDS listener');
  assert.equal(await proxy.stat('listener_manager.listener_added'), 1);
  assert.equal(await proxy.stat('listener_manager.listener_create_success'), 2, 'one per worker');
  assert.equal(await proxy.stat('listener_manager.total_listeners_active'), 1);

  const load = new SteadyLoad(port);
  const h2c = new H2cClient(port);
  try {
    assert.equal(await h2c.get(), 'b');
    await waitFor('the load to run', () => ((load.bodies.get('b') ?? 0) > 20 ? true : undefined));
    push('2', [listener('dyn', 'c', [FAULT_FILTER])]);
    // The old h2c session, asked one request at a time, is told to go with an answer (by the old chain).
    await waitFor('GOAWAY on the old h2c session', async () => {
      if (!h2c.goaway) assert.equal(await h2c.get(), 'b');
      // The GOAWAY frame follows the answer's last frame.
      await new Promise((resolve) => setTimeout(resolve, 50));
      return h2c.goaway ? true : undefined;
    });
    await waitFor('the load to reach the changed listener', () => ((load.bodies.get('c') ?? 0) > 20 ? true : undefined), 30_000);
  } finally {
    await load.stop();
    h2c.session.close();
  }
  assert.deepEqual(load.failures, [], 'no request failed while the listener changed');
  assert.ok(load.closeHeaders > 0, 'the old keep-alive connections were answered with Connection: close');
  assert.equal(await proxy.listenerPort('dyn'), port, 'the listener kept its socket');
  await untilBothWorkersReach(port, up.c, up.workers, 'both workers to serve the changed listener');
  assert.equal((await get(port, '/faulty')).status, 418, 'the new filter runs');
  assert.equal(await proxy.stat('listener_manager.listener_modified'), 1);
  assert.equal(await proxy.stat('listener_manager.listener_create_success'), 4);
  return port;
}

/** A listener that cannot be built is refused by its path; the previous one keeps serving. */
async function refusesBadListener(proxy: RunningProxy, port: number, push: (version: string, resources: JsonObject[]) => void, rejected: () => Promise<string>): Promise<void> {
  // An inline route_config checks its clusters (validate_clusters), as a static listener's does.
  push('3', [listener('other', 'b'), listener('dyn', 'nope')]);
  assert.match(
    await rejected(),
    /Error adding\/updating listener\(s\) dyn: resources\[1\]\.filter_chains\[0\]\.filters\[0\]\.typed_config\.route_config\.virtual_hosts\[0\]\.routes\[0\]\.route\.cluster: .*nope/,
  );
  assert.equal((await get(port)).body, 'c', 'the previous listener serves');
  // /config_dump shows both: what serves, and why the update's version was refused.
  const dyn = (await dynamicListeners(proxy)).find((l) => l['name'] === 'dyn')!;
  // The version of the update that brought it: `2` from the file, `l2` over ADS.
  assert.match((dyn['active_state'] as JsonObject)['version_info'] as string, /^l?2$/);
  const error = dyn['error_state'] as JsonObject;
  assert.match(error['details'] as string, /^resources\[1\]\.filter_chains\[0\]\.filters\[0\]\.typed_config\.route_config/);
  assert.match(JSON.stringify(error['failed_configuration']), /"cluster":"nope"/);
  // The good listener of the update applied, as in Envoy.
  const other = await waitFor('listener other', () => proxy.listenerPort('other').catch(() => undefined));
  assert.equal((await get(other)).body, 'b');
}

describe('LDS from a file, two workers', TIMEOUT, () => {
  test('a listener appears, changes under load, a bad one is refused by path, and it is removed', async (t) => {
    const up = await upstreams(t);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-lds-'));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const ca = makeCa(dir, 'ca', 30);
    const file = path.join(dir, 'lds.json');
    pushFile(file, '1', [listener('dyn', 'b')]);
    const config = {
      node: { id: 'lds-test', cluster: 'lds-test' },
      static_resources: { clusters: [staticCluster('b', up.b.port), staticCluster('c', up.c.port)] },
      dynamic_resources: { lds_config: { path: file, resource_api_version: 'V3' } },
    };
    const proxy = await startProxy(config, DRAIN_ARGS);
    t.after(() => proxy.cleanup());
    up.workers = proxy.groupPids().filter((p) => p !== proxy.pid);
    assert.equal(up.workers.length, 2);

    const push = (version: string, resources: JsonObject[]) => pushFile(file, version, resources);
    const port = await appearsAndChanges(proxy, up, push);
    const dump = await dynamicListeners(proxy);
    assert.equal(dump.length, 1);
    const [dynamic] = dump as unknown as { name: string; active_state: { version_info: string; listener: JsonObject; last_updated: string } }[];
    assert.equal(dynamic!.name, 'dyn');
    assert.equal(dynamic!.active_state.version_info, '2');
    assert.equal(dynamic!.active_state.listener['name'], 'dyn');
    assert.match(JSON.stringify(dynamic!.active_state.listener), /"cluster":"c"/);
    const listeners = JSON.parse((await proxy.admin('/config_dump?mask=version_info')).body) as { configs: JsonObject[] };
    assert.ok(listeners.configs.some((c) => c['version_info'] === '2'), 'ListenersConfigDump shows the version LDS applied');
    await refusesBadListener(proxy, port, push, async () => {
      await waitFor('the rejection', async () => ((await proxy.stat('listener_manager.lds.update_rejected')) === 1 ? true : undefined));
      // The log reaches the pipe a little after the counter.
      return waitFor('the rejection logged', () => /Error adding\/updating listener\(s\).*/.exec(proxy.stderr)?.[0]);
    });

    push('4', []);
    await waitFor('dyn to stop accepting', async () => ((await refuses(port)) ? true : undefined));
    assert.equal(await proxy.stat('listener_manager.listener_removed'), 2);
    assert.equal(await proxy.stat('listener_manager.total_listeners_active'), 0);
    assert.equal(await proxy.stat('listener_manager.lds.update_success'), 3);
    assert.doesNotMatch((await proxy.admin('/listeners')).body, /dyn::/);

    // A listener whose certificate comes from SDS warms until it has come, serves it, and takes
    // the next one on new connections.
    const secretFile = path.join(dir, 'sds.json');
    const [first, second] = [makeLeaf(dir, ca, 'first', 'DNS:localhost', 30), makeLeaf(dir, ca, 'second', 'DNS:localhost', 30)];
    const secret = (cert: CertificateFiles) => ({
      '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret',
      name: 'cert',
      tls_certificate: { certificate_chain: { filename: cert.cert }, private_key: { filename: cert.key } },
    });
    pushFile(secretFile, '1', [secret(first)]);
    const sds = listener('tls', 'b');
    (sds['filter_chains'] as JsonObject[])[0]!['transport_socket'] = {
      name: 'envoy.transport_sockets.tls',
      typed_config: {
        '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext',
        common_tls_context: { tls_certificate_sds_secret_configs: [{ name: 'cert', sds_config: { path: secretFile, resource_api_version: 'V3' } }] },
      },
    };
    push('5', [sds]);
    const tlsPort = await waitFor('the SDS listener', () => proxy.listenerPort('tls').catch(() => undefined));
    await waitFor('the first certificate', async () => ((await tlsSerial(tlsPort)) === serialOf(first.cert) ? true : undefined));
    pushFile(secretFile, '2', [secret(second)]);
    await waitFor('the second certificate', async () => ((await tlsSerial(tlsPort)) === serialOf(second.cert) ? true : undefined));
    assert.equal(await proxy.stat('sds.cert.update_success'), 2);
  });
});

describe('LDS and CDS from files, two workers', TIMEOUT, () => {
  test("an LDS listener's inline route names a CDS cluster: checked against the cluster manager's clusters, as in Envoy", async (t) => {
    const up = await upstreams(t);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-lds-cds-'));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const [lds, cds] = [path.join(dir, 'lds.json'), path.join(dir, 'cds.json')];
    pushFile(cds, '1', [{ '@type': 'type.googleapis.com/envoy.config.cluster.v3.Cluster', ...staticCluster('from_cds', up.b.port) }]);
    pushFile(lds, '1', [listener('dyn', 'from_cds')]);
    const source = (file: string) => ({ path: file, resource_api_version: 'V3' });
    const proxy = await startProxy({ node: { id: 'lds-test', cluster: 'lds-test' }, dynamic_resources: { lds_config: source(lds), cds_config: source(cds) } }, DRAIN_ARGS);
    t.after(() => proxy.cleanup());
    up.workers = proxy.groupPids().filter((p) => p !== proxy.pid);
    const port = await proxy.listenerPort('dyn');
    await untilBothWorkersReach(port, up.b, up.workers, 'both workers routing to the CDS cluster');
    assert.equal(await proxy.stat('listener_manager.lds.update_rejected'), 0);
    // A cluster neither the bootstrap nor CDS has is still refused by path.
    pushFile(lds, '2', [listener('dyn', 'nowhere')]);
    await waitFor('the rejection', async () => ((await proxy.stat('listener_manager.lds.update_rejected')) === 1 ? true : undefined));
    // The log reaches the pipe a little after the counter.
    await waitFor('the rejection logged', () =>
      /resources\[0\]\.filter_chains\[0\]\.filters\[0\]\.typed_config\.route_config\.virtual_hosts\[0\]\.routes\[0\]\.route\.cluster: route: unknown cluster 'nowhere'/.exec(proxy.stderr)?.[0],
    );
    assert.equal((await get(port)).status, 200);
  });
});

describe('LDS over ADS, two workers', TIMEOUT, () => {
  test('a listener appears, changes under load, a bad one is NACKed by path, and it is removed', async (t) => {
    const xds = await XdsServer.start();
    t.after(() => xds.close());
    const up = await upstreams(t);
    xds.setResources(LISTENER_TYPE, 'l1', [listener('dyn', 'b')]);
    const config = {
      node: { id: 'lds-test', cluster: 'lds-test' },
      static_resources: { clusters: [staticCluster('b', up.b.port), staticCluster('c', up.c.port), staticCluster('xds', xds.port, { http2_protocol_options: {} })] },
      dynamic_resources: {
        ads_config: { api_type: 'GRPC', transport_api_version: 'V3', grpc_services: [{ envoy_grpc: { cluster_name: 'xds' } }] },
        lds_config: { ads: {}, resource_api_version: 'V3' },
      },
    };
    const proxy = await startProxy(config, DRAIN_ARGS);
    t.after(() => proxy.cleanup());
    up.workers = proxy.groupPids().filter((p) => p !== proxy.pid);

    const push = (version: string, resources: JsonObject[]) => xds.setResources(LISTENER_TYPE, `l${version}`, resources);
    const port = await appearsAndChanges(proxy, up, push);
    await refusesBadListener(proxy, port, push, async () => {
      const nack = await waitFor('the LDS NACK', () => xds.requests.find((r) => r.type_url === LISTENER_TYPE && r.error_detail !== null));
      assert.equal(nack.version_info, 'l2', 'NACKed with the version that serves');
      return nack.error_detail!.message;
    });

    push('4', []);
    await waitFor('dyn to stop accepting', async () => ((await refuses(port)) ? true : undefined));
    assert.equal(await proxy.stat('listener_manager.listener_removed'), 2);
    assert.equal(await proxy.stat('listener_manager.lds.update_rejected'), 1);
  });
});

describe('LDS over delta xDS (DeltaListeners), two workers', TIMEOUT, () => {
  test('a listener appears in both workers, a bad one is NACKed by its place in the response, and it is removed', async (t) => {
    const xds = await XdsServer.start();
    t.after(() => xds.close());
    const up = await upstreams(t);
    xds.setResources(LISTENER_TYPE, 'd1', [listener('dyn', 'b')]);
    const source = { api_type: 'DELTA_GRPC', transport_api_version: 'V3', grpc_services: [{ envoy_grpc: { cluster_name: 'xds' } }] };
    const config = {
      node: { id: 'lds-test', cluster: 'lds-test' },
      static_resources: { clusters: [staticCluster('b', up.b.port), staticCluster('xds', xds.port, { http2_protocol_options: {} })] },
      dynamic_resources: { lds_config: { api_config_source: source, resource_api_version: 'V3' } },
    };
    const proxy = await startProxy(config, DRAIN_ARGS);
    t.after(() => proxy.cleanup());
    up.workers = proxy.groupPids().filter((p) => p !== proxy.pid);
    const port = await waitFor('listener dyn in /listeners', () => proxy.listenerPort('dyn').catch(() => undefined));
    await untilBothWorkersReach(port, up.b, up.workers, 'both workers to serve the LDS listener');
    assert.ok(xds.delta.requests.some((r) => r.path === '/envoy.service.listener.v3.ListenerDiscoveryService/DeltaListeners'));

    xds.setResources(LISTENER_TYPE, 'd2', [listener('dyn', 'nope')]);
    await waitFor('the rejection', async () => ((await proxy.stat('listener_manager.lds.update_rejected')) === 1 ? true : undefined));
    await waitFor('the rejection logged', () => /dyn: resources\[0\]\.resource\.filter_chains\[0\]/.exec(proxy.stderr)?.[0]);
    assert.equal((await get(port)).body, 'b', 'the previous listener serves');

    xds.setResources(LISTENER_TYPE, 'd3', []);
    await waitFor('dyn to stop accepting', async () => ((await refuses(port)) ? true : undefined));
    assert.equal(await proxy.stat('listener_manager.listener_removed'), 1);
  });
});

const ROUTE_TYPE = 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration';

/** Listener `name` whose connection manager takes route configuration `routes` over ADS. */
function rdsListener(name: string, routes: string): JsonObject {
  const rds = { config_source: { ads: {}, resource_api_version: 'V3' }, route_config_name: routes };
  const built = httpListener(name, 0, [], { rds, stat_prefix: name, http_filters: [ROUTER] });
  // The management server encodes what it is given: no route_config key at all.
  delete built.filter_chains[0].filters[0].typed_config.route_config;
  return { '@type': LISTENER_TYPE, ...built };
}

function routeConfig(name: string, target: string): JsonObject {
  return { '@type': ROUTE_TYPE, name, virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster: target } }] }] };
}

describe('LDS listeners with RDS warm before they take traffic', TIMEOUT, () => {
  test('a new listener waits for its routes; a changed one serves the old until the new has its routes', async (t) => {
    const xds = await XdsServer.start();
    t.after(() => xds.close());
    const up = await upstreams(t);
    xds.setResources(LISTENER_TYPE, 'l1', []);
    const config = {
      node: { id: 'lds-test', cluster: 'lds-test' },
      static_resources: { clusters: [staticCluster('b', up.b.port), staticCluster('c', up.c.port), staticCluster('xds', xds.port, { http2_protocol_options: {} })] },
      dynamic_resources: {
        ads_config: { api_type: 'GRPC', transport_api_version: 'V3', grpc_services: [{ envoy_grpc: { cluster_name: 'xds' } }] },
        lds_config: { ads: {}, resource_api_version: 'V3' },
      },
    };
    const proxy = await startProxy(config, DRAIN_ARGS);
    t.after(() => proxy.cleanup());
    up.workers = proxy.groupPids().filter((p) => p !== proxy.pid);

    xds.setResources(LISTENER_TYPE, 'l2', [rdsListener('warm', 'routes')]);
    await waitFor('the listener to warm', async () => ((await proxy.stat('listener_manager.total_listeners_warming')) === 1 ? true : undefined));
    await waitFor('its RDS subscription', () => xds.requests.find((r) => r.type_url === ROUTE_TYPE && r.resource_names.includes('routes')));
    assert.doesNotMatch((await proxy.admin('/listeners')).body, /warm::/, 'a warming listener is not active');
    const [warming] = await dynamicListeners(proxy);
    assert.equal(warming!['name'], 'warm');
    assert.equal((warming!['warming_state'] as JsonObject)['version_info'], 'l2');
    assert.equal(warming!['active_state'], undefined);
    // Changed while it warms: the new version warms in its place, on the socket it had.
    xds.setResources(LISTENER_TYPE, 'l2b', [{ ...rdsListener('warm', 'routes'), per_connection_buffer_limit_bytes: 65536 }]);
    await waitFor('the change counted', async () => ((await proxy.stat('listener_manager.listener_modified')) === 1 ? true : undefined));
    assert.equal(await proxy.stat('listener_manager.total_listeners_warming'), 1);
    xds.setResources(ROUTE_TYPE, 'r1', [routeConfig('routes', 'b')]);
    const port = await waitFor('the warmed listener', () => proxy.listenerPort('warm').catch(() => undefined));
    await untilBothWorkersReach(port, up.b, up.workers, 'both workers to serve the warmed listener');
    assert.equal(await proxy.stat('listener_manager.total_listeners_warming'), 0);

    // Changed to routes another configuration brings: the old listener serves until they come.
    xds.setResources(LISTENER_TYPE, 'l3', [rdsListener('warm', 'routes2')]);
    await waitFor('the change to warm', async () => ((await proxy.stat('listener_manager.total_listeners_warming')) === 1 ? true : undefined));
    for (let i = 0; i < 4; i++) assert.equal((await get(port)).body, 'b', 'the old listener serves while the new one warms');
    xds.setResources(ROUTE_TYPE, 'r2', [routeConfig('routes', 'b'), routeConfig('routes2', 'c')]);
    await untilBothWorkersReach(port, up.c, up.workers, 'both workers to serve the changed listener');
    assert.equal(await proxy.listenerPort('warm'), port, 'the same socket');
    assert.equal(await proxy.stat('http.warm.rds.routes2.update_success'), 1);

    // A listener that goes while it warms never serves.
    xds.setResources(LISTENER_TYPE, 'l4', [rdsListener('warm', 'routes2'), rdsListener('gone', 'never')]);
    await waitFor('gone to warm', async () => ((await proxy.stat('listener_manager.total_listeners_warming')) === 1 ? true : undefined));
    xds.setResources(LISTENER_TYPE, 'l5', [rdsListener('warm', 'routes2')]);
    await waitFor('gone removed', async () => ((await proxy.stat('listener_manager.listener_removed')) === 1 ? true : undefined));
    assert.equal(await proxy.stat('listener_manager.total_listeners_warming'), 0);
    assert.deepEqual((await dynamicListeners(proxy)).map((l) => l['name']), ['warm']);
    assert.doesNotMatch((await proxy.admin('/listeners')).body, /gone::/);
  });
});

describe('/drain_listeners with LDS', TIMEOUT, () => {
  test("stops LDS's listeners too, and later updates add none", async (t) => {
    const up = await upstreams(t);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-lds-drain-'));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'lds.json');
    // A v2 resource as Envoy 1.16 reads one (resource_api_version AUTO is V2).
    pushFile(file, '1', [{ ...listener('dyn', 'b'), '@type': LISTENER_TYPE_V2 }]);
    const config = {
      node: { id: 'lds-test', cluster: 'lds-test' },
      static_resources: { clusters: [staticCluster('b', up.b.port)] },
      dynamic_resources: { lds_config: { path: file } },
    };
    const proxy = await startProxy(config, DRAIN_ARGS);
    t.after(() => proxy.cleanup());
    const port = await waitFor('listener dyn in /listeners', () => proxy.listenerPort('dyn').catch(() => undefined));
    assert.equal((await get(port)).body, 'b');

    assert.equal((await proxy.admin('/drain_listeners', 'POST')).status, 200);
    await waitFor('dyn to stop accepting', async () => ((await refuses(port)) ? true : undefined));
    await waitFor('listener_stopped in both workers', async () => ((await proxy.stat('listener_manager.listener_stopped')) === 2 ? true : undefined));
    assert.doesNotMatch((await proxy.admin('/listeners')).body, /dyn::/);

    pushFile(file, '2', [{ ...listener('dyn', 'b'), '@type': LISTENER_TYPE_V2 }, { ...listener('later', 'b'), '@type': LISTENER_TYPE_V2 }]);
    await waitFor('the update accepted', async () => ((await proxy.stat('listener_manager.lds.update_success')) === 2 ? true : undefined));
    assert.equal((await proxy.admin('/listeners')).body, '', 'nothing added once stopped');
    assert.equal(await proxy.stat('listener_manager.listener_added'), 1);
  });
});

/** One HTTP/1.1 connection kept open: each answer says whether it asked to close. */
class KeepAliveClient {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  readonly sockets = new Set<net.Socket>();

  constructor(private readonly port: number) {}

  get(): Promise<{ body: string; close: boolean }> {
    return new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: this.port, path: '/', agent: this.agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ body: Buffer.concat(chunks).toString(), close: res.headers.connection === 'close' }));
        res.on('error', reject);
      });
      req.on('socket', (socket: net.Socket) => this.sockets.add(socket));
      req.on('error', reject);
      req.setTimeout(10_000, () => req.destroy(new Error('keep-alive request timed out')));
      req.end();
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

describe('LDS: a change of filter chains alone drains only the changed chains', TIMEOUT, () => {
  test('a connection on an unchanged chain carries on past the drain time; one on a changed chain is told to close', async (t) => {
    const up = await upstreams(t);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-lds-chains-'));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'lds.json');
    pushFile(file, '1', [listener('dyn', 'b')]);
    const config = {
      node: { id: 'lds-test', cluster: 'lds-test' },
      static_resources: { clusters: [staticCluster('b', up.b.port), staticCluster('c', up.c.port)] },
      dynamic_resources: { lds_config: { path: file, resource_api_version: 'V3' } },
    };
    const proxy = await startProxy(config, DRAIN_ARGS);
    t.after(() => proxy.cleanup());
    const port = await waitFor('listener dyn in /listeners', () => proxy.listenerPort('dyn').catch(() => undefined));
    const client = new KeepAliveClient(port);
    t.after(() => client.close());
    assert.deepEqual(await client.get(), { body: 'b', close: false });

    // A second chain (for a destination port no connection has): the first is unchanged.
    const withSecond = listener('dyn', 'b');
    const second = { ...(listener('dyn', 'c')['filter_chains'] as JsonObject[])[0]!, filter_chain_match: { destination_port: 1 } };
    withSecond['filter_chains'] = [...(withSecond['filter_chains'] as JsonObject[]), second];
    pushFile(file, '2', [withSecond]);
    await waitFor('the change applied', async () => ((await proxy.stat('listener_manager.listener_modified')) === 1 ? true : undefined));
    await waitFor('both workers to take it', async () => ((await proxy.stat('listener_manager.listener_create_success')) === 4 ? true : undefined));
    // Past the drain time (1 s): the connection on the kept chain is neither told to close nor closed.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    for (let i = 0; i < 3; i++) assert.deepEqual(await client.get(), { body: 'b', close: false });
    assert.equal(client.sockets.size, 1, 'one connection all along');

    // The first chain changes: its connection drains.
    const changed = listener('dyn', 'c');
    changed['filter_chains'] = [...(changed['filter_chains'] as JsonObject[]), second];
    pushFile(file, '3', [changed]);
    await waitFor('Connection: close on the changed chain', async () => ((await client.get()).close ? true : undefined));
    assert.equal((await get(port)).body, 'c');
  });
});

describe('LDS over REST, two workers', TIMEOUT, () => {
  test('a listener polled from /v3/discovery:listeners serves in both workers', async (t) => {
    const xds = await XdsServer.start();
    t.after(() => xds.close());
    const up = await upstreams(t);
    xds.setResources(LISTENER_TYPE, 'r1', [listener('dyn', 'b')]);
    const source = { api_type: 'REST', transport_api_version: 'V3', cluster_names: ['xds_rest'], refresh_delay: '0.2s' };
    const config = {
      node: { id: 'lds-test', cluster: 'lds-test' },
      static_resources: { clusters: [staticCluster('b', up.b.port), staticCluster('xds_rest', xds.restPort)] },
      dynamic_resources: { lds_config: { api_config_source: source, resource_api_version: 'V3' } },
    };
    const proxy = await startProxy(config, DRAIN_ARGS);
    t.after(() => proxy.cleanup());
    up.workers = proxy.groupPids().filter((p) => p !== proxy.pid);
    const port = await waitFor('listener dyn in /listeners', () => proxy.listenerPort('dyn').catch(() => undefined));
    await untilBothWorkersReach(port, up.b, up.workers, 'both workers to serve the LDS listener');
    assert.ok(xds.requests.some((r) => r.path === '/v3/discovery:listeners'));
  });
});
