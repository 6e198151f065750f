// ClusterLoadAssignment.policy served by the real proxy: overprovisioning_factor in the priority
// split, drop_overloads answering 503 with x-proxy-drop-overload and counting
// upstream_rq_drop_overload, from a static load_assignment and from EDS (files), and EDS's
// endpoint_stale_after emptying a cluster whose assignment was not renewed in time.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { httpListener } from '../helpers/config_fixtures';
import { request, type RunningProxy, startProxy, waitFor } from '../helpers/proxy_process';
import { namedUpstream, type NamedUpstream } from '../helpers/socket_owner';

const TIMEOUT = { timeout: 90_000 };
const CLA = 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment';
/** A port nothing listens on: the address of endpoints that are never picked (UNHEALTHY). */
const DEAD_PORT = 9;

type Json = Record<string, unknown>;

const lbEndpoint = (port: number, health = 'HEALTHY'): Json => ({
  endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: port } } },
  health_status: health,
});

/**
 * Priority 0: `p0` and an UNHEALTHY endpoint (half available: 70% of the load at Envoy's 1.4,
 * all of it at 2.0); priority 1: `p1`.
 */
function twoPriorities(p0: NamedUpstream, p1: NamedUpstream, policy?: Json): Json {
  return {
    cluster_name: 'svc',
    endpoints: [
      { priority: 0, lb_endpoints: [lbEndpoint(p0.port), lbEndpoint(DEAD_PORT, 'UNHEALTHY')] },
      { priority: 1, lb_endpoints: [lbEndpoint(p1.port)] },
    ],
    ...(policy === undefined ? {} : { policy }),
  };
}

const dropAll = { drop_overloads: [{ category: 'throttle', drop_percentage: { numerator: 100 } }] };

function staticCluster(name: string, loadAssignment: Json): Json {
  return { name, connect_timeout: '1s', load_assignment: loadAssignment };
}

function edsCluster(name: string, file: string): Json {
  return {
    name,
    type: 'EDS',
    connect_timeout: '1s',
    eds_cluster_config: { eds_config: { path: file, resource_api_version: 'V3' }, service_name: 'svc' },
    common_lb_config: { update_merge_window: '0s' },
  };
}

/** An EDS file replaced by an atomic rename for each update. */
function publish(file: string, version: string, assignment: Json): void {
  fs.writeFileSync(`${file}.tmp`, JSON.stringify({ version_info: version, resources: [{ '@type': CLA, ...assignment }] }));
  fs.renameSync(`${file}.tmp`, file);
}

describe('load_assignment.policy on real traffic', TIMEOUT, () => {
  let dir: string;
  let proxy: RunningProxy;
  let a: NamedUpstream;
  let b: NamedUpstream;
  let port: number;
  let edsFile: string;
  let staleFile: string;

  /** `n` requests to `prefix`, each on its own connection. */
  async function send(prefix: string, n: number): Promise<{ status: number; body: string; dropHeader: string | undefined }[]> {
    const out = [];
    for (let i = 0; i < n; i++) {
      const reply = await request(`http://127.0.0.1:${port}${prefix}`, { headers: { connection: 'close' } });
      out.push({ status: reply.status, body: reply.body, dropHeader: reply.headers['x-proxy-drop-overload'] as string | undefined });
    }
    return out;
  }

  const count = (replies: readonly { body: string }[], body: string) => replies.filter((r) => r.body === body).length;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-policy-it-'));
    edsFile = path.join(dir, 'eds.json');
    staleFile = path.join(dir, 'stale.json');
    [a, b] = await Promise.all(['a', 'b'].map((name) => namedUpstream(name, () => [])));
    publish(edsFile, '1', twoPriorities(a, b, { overprovisioning_factor: 200 }));
    publish(staleFile, '1', { cluster_name: 'svc', endpoints: [{ lb_endpoints: [lbEndpoint(a.port)] }] });
    const routes = ['plain', 'factor200', 'dropped', 'half', 'eds', 'stale'].map((name) => ({ match: { prefix: `/${name}` }, route: { cluster: name } }));
    proxy = await startProxy({
      static_resources: {
        listeners: [httpListener('in', 0, routes)],
        clusters: [
          staticCluster('plain', twoPriorities(a, b)),
          staticCluster('factor200', twoPriorities(a, b, { overprovisioning_factor: 200 })),
          staticCluster('dropped', { cluster_name: 'dropped', endpoints: [{ lb_endpoints: [lbEndpoint(a.port)] }], policy: dropAll }),
          staticCluster('half', {
            cluster_name: 'half',
            endpoints: [{ lb_endpoints: [lbEndpoint(a.port)] }],
            policy: { drop_overloads: [{ category: 'lb', drop_percentage: { numerator: 5000, denominator: 'TEN_THOUSAND' } }] },
          }),
          edsCluster('eds', edsFile),
          edsCluster('stale', staleFile),
        ],
      },
    });
    port = await proxy.listenerPort('in');
  });

  after(async () => {
    await proxy?.cleanup();
    for (const u of [a, b]) u?.server.close();
    if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
  });

  test('overprovisioning_factor: at 1.4 a half-available priority 0 spills 30% to priority 1; at 2.0 it keeps everything', async () => {
    const plain = await send('/plain', 60);
    const spilled = count(plain, 'b');
    // 30% of 60 is 18; none at all would be a 1 in 10^9 draw.
    assert.ok(spilled > 0 && spilled < 40, `priority 1 took ${spilled} of 60`);
    assert.equal(count(plain, 'a') + spilled, 60);
    assert.equal(count(await send('/factor200', 60), 'a'), 60);
  });

  test('drop_overloads at 100%: every request is a 503 "drop overload" with x-proxy-drop-overload, counted, none sent upstream', async () => {
    const before = a.seen.length;
    const replies = await send('/dropped', 10);
    assert.deepEqual(new Set(replies.map((r) => `${r.status} ${r.body} ${r.dropHeader}`)), new Set(['503 drop overload true']));
    assert.equal(a.seen.length, before);
    assert.equal(await proxy.stat('cluster.dropped.upstream_rq_drop_overload'), 10);
    assert.equal(await proxy.stat('cluster.dropped.upstream_rq_503'), 10);
  });

  test('drop_overloads at 5000/10000: about half the requests are dropped, the others served', async () => {
    const replies = await send('/half', 200);
    const dropped = replies.filter((r) => r.status === 503 && r.body === 'drop overload' && r.dropHeader === 'true').length;
    // Binomial(200, 0.5): outside 60..140 is a 6-sigma draw.
    assert.ok(dropped >= 60 && dropped <= 140, `${dropped} of 200 dropped`);
    assert.equal(count(replies, 'a') + dropped, 200);
    assert.equal(await proxy.stat('cluster.half.upstream_rq_drop_overload'), dropped);
  });

  test('EDS: each assignment brings its policy (overprovisioning 2.0, then drop 100%, then none) to the worker', async () => {
    assert.equal(count(await send('/eds', 40), 'a'), 40);
    publish(edsFile, '2', twoPriorities(a, b, dropAll));
    await waitFor('the drop policy', async () => ((await send('/eds', 1))[0]!.body === 'drop overload' ? true : undefined), 10_000);
    assert.deepEqual(new Set((await send('/eds', 5)).map((r) => `${r.status} ${r.dropHeader}`)), new Set(['503 true']));
    publish(edsFile, '3', twoPriorities(a, b));
    await waitFor('traffic to priority 1 at the default factor', async () => (count(await send('/eds', 20), 'b') > 0 ? true : undefined), 10_000);
    assert.equal((await send('/eds', 10)).filter((r) => r.dropHeader !== undefined).length, 0);
  });

  test('EDS endpoint_stale_after: an assignment not renewed in time is dropped (no host, 503); a new one serves again', async () => {
    assert.equal((await send('/stale', 1))[0]!.body, 'a');
    publish(staleFile, '2', { cluster_name: 'svc', endpoints: [{ lb_endpoints: [lbEndpoint(b.port)] }], policy: { endpoint_stale_after: '2s' } });
    await waitFor('the new assignment to serve', async () => ((await send('/stale', 1))[0]!.body === 'b' ? true : undefined), 10_000);
    await waitFor('the assignment to go stale', async () => ((await send('/stale', 1))[0]!.status === 503 ? true : undefined), 10_000);
    assert.equal((await send('/stale', 1))[0]!.body, 'no healthy upstream');
    assert.equal(await proxy.stat('cluster.stale.assignment_timeout_received'), 1);
    assert.equal(await proxy.stat('cluster.stale.assignment_stale'), 1);
    assert.equal(await proxy.stat('cluster.stale.membership_total'), 0);
    publish(staleFile, '3', { cluster_name: 'svc', endpoints: [{ lb_endpoints: [lbEndpoint(a.port)] }], policy: { endpoint_stale_after: '60s' } });
    await waitFor('the renewed assignment to serve', async () => ((await send('/stale', 1))[0]!.body === 'a' ? true : undefined), 10_000);
    assert.equal(await proxy.stat('cluster.stale.assignment_timeout_received'), 2);
    assert.equal(await proxy.stat('cluster.stale.assignment_stale'), 1);
  });
});
