// EDS served by a real proxy with two workers: endpoints appear, change (weight, health) and
// disappear in GET /clusters and in the traffic of both workers, with no restart; a bad update is
// counted and the hosts it would have replaced keep serving. The config source is a parameter:
// files, then a gRPC management server (NACK, dropped stream, resubscription).

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { request, type RunningProxy, startProxy, waitFor } from '../helpers/proxy_process';
import { httpListener } from '../helpers/config_fixtures';
import { namedUpstream, type NamedUpstream } from '../helpers/socket_owner';
import { XdsServer } from '../helpers/xds_server';
import type { JsonObject } from '../../src/config/json';

const TIMEOUT = { timeout: 120_000 };
const CLA = 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment';

/** Where the proxy's EDS updates come from: its eds_config, and how the test publishes a response. */
interface EdsSource {
  readonly edsConfig: Record<string, unknown>;
  publish(version: string, resources: readonly unknown[]): void;
  /** Publishes bytes that are no DiscoveryResponse. */
  publishMalformed(): void;
  close(): void;
}

/** A file replaced by an atomic rename for each update. */
function fileSource(): EdsSource {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-eds-it-'));
  const file = path.join(dir, 'eds.json');
  const write = (text: string) => {
    fs.writeFileSync(`${file}.tmp`, text);
    fs.renameSync(`${file}.tmp`, file);
  };
  return {
    edsConfig: { path: file, resource_api_version: 'V3' },
    publish: (version, resources) => write(JSON.stringify({ version_info: version, resources })),
    publishMalformed: () => write('{"version_info": "broken", "resources": ['),
    close: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}


function lbEndpoint(u: NamedUpstream, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: u.port } } }, ...extra };
}

function assignment(localities: readonly Record<string, unknown>[]): Record<string, unknown> {
  return { '@type': CLA, cluster_name: 'svc', endpoints: localities };
}

function bootstrap(edsConfig: Record<string, unknown>): Record<string, unknown> {
  return {
    static_resources: {
      listeners: [httpListener('in', 0, [{ match: { prefix: '/' }, route: { cluster: 'backend' } }])],
      clusters: [
        {
          name: 'backend',
          type: 'EDS',
          connect_timeout: '1s',
          eds_cluster_config: { eds_config: edsConfig, service_name: 'svc' },
          common_lb_config: { update_merge_window: '0.2s' },
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

/** Sends requests until every one of `workers` has reached `target`. */
async function untilEveryWorkerReaches(port: number, target: NamedUpstream, workers: readonly number[], what: string): Promise<void> {
  await waitFor(what, async () => {
    await requests(port, 4);
    return workers.every((w) => target.seen.includes(w)) ? true : undefined;
  }, 30_000);
}

/** The host lines of GET /clusters for `field`, by upstream name. */
async function hostField(proxy: RunningProxy, upstreams: readonly NamedUpstream[], field: string): Promise<Record<string, string>> {
  const body = (await proxy.admin('/clusters')).body;
  const out: Record<string, string> = {};
  for (const u of upstreams) {
    const match = new RegExp(`^backend::127\\.0\\.0\\.1:${u.port}::${field}::(.*)$`, 'm').exec(body);
    if (match) out[u.name] = match[1]!;
  }
  return out;
}

function edsSuite(sourceName: string, makeSource: () => EdsSource): void {
  describe(`EDS from ${sourceName} with two workers`, TIMEOUT, () => {
    let source: EdsSource;
    let proxy: RunningProxy;
    let a: NamedUpstream;
    let b: NamedUpstream;
    let c: NamedUpstream;
    let listener: number;
    let workers: number[] = [];

    before(async () => {
      source = makeSource();
      [a, b, c] = await Promise.all(['a', 'b', 'c'].map((name) => namedUpstream(name, () => workers)));
      source.publish('1', [assignment([{ lb_endpoints: [lbEndpoint(a)] }])]);
      proxy = await startProxy(bootstrap(source.edsConfig), ['--concurrency', '2']);
      workers = proxy.groupPids().filter((p) => p !== proxy.pid);
      assert.equal(workers.length, 2);
      listener = await proxy.listenerPort('in');
    });

    after(async () => {
      await proxy?.cleanup();
      for (const u of [a, b, c]) u?.server.close();
      source?.close();
    });

    test('the first assignment is the membership at LIVE, in /clusters and in both workers', async () => {
      assert.deepEqual(Object.keys(await hostField(proxy, [a, b, c], 'health_flags')), ['a']);
      await untilEveryWorkerReaches(listener, a, workers, 'both workers to reach a');
      assert.equal(await proxy.stat('cluster.backend.update_success'), 1);
      assert.equal(await proxy.stat('cluster.backend.membership_total'), 1);
    });

    test('a new set replaces the old in both workers; weights and localities show in /clusters', async () => {
      source.publish('2', [
        assignment([
          { locality: { zone: 'z1' }, lb_endpoints: [lbEndpoint(b, { load_balancing_weight: 5 })] },
          { locality: { zone: 'z2' }, lb_endpoints: [lbEndpoint(c)] },
        ]),
      ]);
      await waitFor('/clusters to show b and c only', async () => {
        const hosts = Object.keys(await hostField(proxy, [a, b, c], 'health_flags'));
        return hosts.join() === 'b,c' ? true : undefined;
      });
      assert.deepEqual(await hostField(proxy, [b, c], 'weight'), { b: '5', c: '1' });
      assert.deepEqual(await hostField(proxy, [b, c], 'zone'), { b: 'z1', c: 'z2' });
      await untilEveryWorkerReaches(listener, b, workers, 'both workers to reach b');
      await untilEveryWorkerReaches(listener, c, workers, 'both workers to reach c');
      const before = a.seen.length;
      assert.ok((await requests(listener, 10)).every((body) => body === 'b' || body === 'c'));
      assert.equal(a.seen.length, before, 'no request reached the endpoint EDS removed');
    });

    test('EDS health: UNHEALTHY is /failed_eds_health and takes no traffic; DEGRADED is /degraded_eds_health', async () => {
      source.publish('3', [
        assignment([
          { locality: { zone: 'z1' }, lb_endpoints: [lbEndpoint(b, { load_balancing_weight: 5, health_status: 'UNHEALTHY' })] },
          { locality: { zone: 'z2' }, lb_endpoints: [lbEndpoint(c, { health_status: 'HEALTHY' })] },
        ]),
      ]);
      await waitFor('/failed_eds_health on b', async () => ((await hostField(proxy, [b], 'health_flags')).b === '/failed_eds_health' ? true : undefined));
      assert.equal((await hostField(proxy, [c], 'health_flags')).c, 'healthy');
      // The workers get the change when the merge window ends; then b takes nothing from either.
      await waitFor('both workers to leave b', async () => {
        const before = b.seen.length;
        await requests(listener, 8);
        return b.seen.length === before ? true : undefined;
      }, 30_000);
      await untilEveryWorkerReaches(listener, c, workers, 'both workers to reach c');

      source.publish('4', [assignment([{ lb_endpoints: [lbEndpoint(b, { health_status: 'DEGRADED' }), lbEndpoint(c)] }])]);
      await waitFor('/degraded_eds_health on b', async () => ((await hostField(proxy, [b], 'health_flags')).b === '/degraded_eds_health' ? true : undefined));
      assert.equal(await proxy.stat('cluster.backend.membership_degraded'), 1);
      assert.equal(await proxy.stat('cluster.backend.membership_healthy'), 1);
    });

    test('a malformed or invalid update is counted and rejected; the hosts it would replace keep serving', async () => {
      source.publish('5', [assignment([{ lb_endpoints: [lbEndpoint(b), lbEndpoint(c)] }])]);
      await waitFor('b healthy again', async () => ((await hostField(proxy, [b], 'health_flags')).b === 'healthy' ? true : undefined));
      source.publishMalformed();
      await waitFor('the failure to be counted', async () => ((await proxy.stat('cluster.backend.update_failure')) === 1 ? true : undefined));
      source.publish('6', [assignment([{ lb_endpoints: [lbEndpoint(a, { load_balancing_weight: 0 })] }])]);
      await waitFor('the rejection to be counted', async () => ((await proxy.stat('cluster.backend.update_rejected')) === 1 ? true : undefined));
      assert.deepEqual(Object.keys(await hostField(proxy, [a, b, c], 'health_flags')), ['b', 'c']);
      const before = a.seen.length;
      assert.ok((await requests(listener, 6)).every((body) => body === 'b' || body === 'c'));
      assert.equal(a.seen.length, before);
    });

    test('an assignment without endpoints empties the cluster in both workers', async () => {
      source.publish('7', [assignment([])]);
      await waitFor('/clusters to show no host', async () => (Object.keys(await hostField(proxy, [a, b, c], 'health_flags')).length === 0 ? true : undefined));
      await waitFor('both workers to answer 503', async () => {
        const statuses = [];
        for (let i = 0; i < 6; i++) statuses.push((await request(`http://127.0.0.1:${listener}/`, { headers: { connection: 'close' } })).status);
        return statuses.every((s) => s === 503) ? true : undefined;
      });
      assert.equal(await proxy.stat('cluster.backend.membership_total'), 0);
    });
  });
}

edsSuite('a file', fileSource);

describe('EDS from a gRPC management server with two workers', TIMEOUT, () => {
  test('updates arrive with no restart; a NACK names the field and keeps the hosts; a dropped stream comes back, resubscribes at its version, and traffic never stops', async (t) => {
    const xds = await XdsServer.start();
    t.after(() => xds.close());
    let workers: number[] = [];
    const [a, b] = await Promise.all(['a', 'b'].map((name) => namedUpstream(name, () => workers)));
    t.after(() => {
      for (const u of [a, b]) u!.server.close();
    });
    xds.setResources(CLA, '1', [assignment([{ lb_endpoints: [lbEndpoint(a!)] }]) as JsonObject]);
    const config = bootstrap({
      resource_api_version: 'V3',
      api_config_source: { api_type: 'GRPC', transport_api_version: 'V3', grpc_services: [{ envoy_grpc: { cluster_name: 'xds' } }] },
    }) as { static_resources: { clusters: Record<string, unknown>[] } };
    config.static_resources.clusters.push({
      name: 'xds',
      type: 'STATIC',
      connect_timeout: '1s',
      http2_protocol_options: {},
      load_assignment: { cluster_name: 'xds', endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: xds.port } } } }] }] },
    });
    const proxy = await startProxy(config, ['--concurrency', '2']);
    t.after(() => proxy.cleanup());
    workers = proxy.groupPids().filter((p) => p !== proxy.pid);
    const listener = await proxy.listenerPort('in');
    assert.deepEqual(Object.keys(await hostField(proxy, [a!, b!], 'health_flags')), ['a']);
    assert.equal(await proxy.stat('control_plane.connected_state'), 1);

    xds.setResources(CLA, '2', [assignment([{ lb_endpoints: [lbEndpoint(b!)] }]) as JsonObject]);
    await waitFor('/clusters to show b only', async () => ((Object.keys(await hostField(proxy, [a!, b!], 'health_flags')).join() === 'b') ? true : undefined));
    await untilEveryWorkerReaches(listener, b!, workers, 'both workers to reach b');

    // An invalid weight: NACKed at the last good version, with the field path; b keeps serving.
    xds.setResources(CLA, '3', [assignment([{ lb_endpoints: [lbEndpoint(a!, { load_balancing_weight: 0 })] }]) as JsonObject]);
    const nack = await waitFor('the NACK', () => xds.requests.find((r) => r.error_detail !== null));
    assert.equal(nack.version_info, '2');
    assert.match(nack.error_detail!.message, /load_balancing_weight/);
    assert.equal(await proxy.stat('cluster.backend.update_rejected'), 1);
    assert.deepEqual(new Set(await requests(listener, 6)), new Set(['b']));

    // The stream drops: the proxy keeps serving b and comes back asking for what it has.
    const streamsBefore = Math.max(...xds.requests.map((r) => r.stream));
    xds.dropStreams();
    const resubscribed = await waitFor('a new stream', () => xds.requests.find((r) => r.stream > streamsBefore));
    assert.equal(resubscribed.version_info, '2');
    assert.deepEqual(new Set(await requests(listener, 6)), new Set(['b']));
    await waitFor('connected again', async () => ((await proxy.stat('control_plane.connected_state')) === 1 ? true : undefined));

    xds.setResources(CLA, '4', [assignment([{ lb_endpoints: [lbEndpoint(a!)] }]) as JsonObject]);
    await untilEveryWorkerReaches(listener, a!, workers, 'both workers to reach a again');
    assert.ok((await proxy.stat('cluster.backend.update_success'))! >= 3);
  });
});
