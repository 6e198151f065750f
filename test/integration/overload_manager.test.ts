// The overload manager through the real binary: an injected_resource monitor driven by writing its
// file turns disable_http_keepalive and stop_accepting_requests on and off (HTTP/1.1 and h2c),
// with their stats; a fixed_heap monitor does the same when a worker holds request bodies past its
// threshold, and service comes back once they are gone.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as http2 from 'node:http2';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import { h2Request, request, startUpstream, type Upstream } from '../helpers/http_peers';
import { type RunningProxy, startProxy, waitFor } from '../helpers/proxy_process';

const TIMEOUT = { timeout: 60_000 };
const INJECTED = 'proxy.resource_monitors.injected_resource';
const STOP_REQUESTS = 'proxy.overload_actions.stop_accepting_requests';
const NO_KEEPALIVE = 'proxy.overload_actions.disable_http_keepalive';
const STOP_CONNECTIONS = 'proxy.overload_actions.stop_accepting_connections';

function injectedBootstrap(upstreamPort: number, pressureFile: string) {
  return {
    overload_manager: {
      refresh_interval: '0.05s',
      resource_monitors: [
        {
          name: 'envoy.resource_monitors.injected_resource',
          typed_config: { '@type': 'type.googleapis.com/envoy.config.resource_monitor.injected_resource.v2alpha.InjectedResourceConfig', filename: pressureFile },
        },
      ],
      actions: [
        { name: 'envoy.overload_actions.disable_http_keepalive', triggers: [{ name: 'envoy.resource_monitors.injected_resource', threshold: { value: 0.5 } }] },
        { name: 'envoy.overload_actions.stop_accepting_requests', triggers: [{ name: 'envoy.resource_monitors.injected_resource', threshold: { value: 0.9 } }] },
        { name: 'envoy.overload_actions.stop_accepting_connections', triggers: [{ name: 'envoy.resource_monitors.injected_resource', threshold: { value: 0.99 } }] },
      ],
    },
    static_resources: {
      listeners: [httpListener('in', 0, [{ match: { prefix: '/' }, route: { cluster: 'web' } }], { stat_prefix: 'in' })],
      clusters: [localCluster('web', upstreamPort)],
    },
  };
}

for (const concurrency of [1, 2]) {
  describe(`injected_resource with --concurrency ${concurrency}`, TIMEOUT, () => {
    let upstream: Upstream;
    let proxy: RunningProxy;
    let port = 0;
    let session: http2.ClientHttp2Session;
    let pressureFile = '';
    // Keeps connections alive unless the proxy closes them.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

    before(async () => {
      upstream = await startUpstream('web');
      pressureFile = path.join(fs.mkdtempSync(path.join(process.env.TMPDIR ?? '/tmp', 'overload-')), 'pressure');
      fs.writeFileSync(pressureFile, '0');
      proxy = await startProxy(injectedBootstrap(upstream.port, pressureFile), ['--concurrency', String(concurrency)]);
      port = await proxy.listenerPort('in');
      session = http2.connect(`http://127.0.0.1:${port}`);
    });

    after(async () => {
      session?.destroy();
      agent.destroy();
      await proxy?.cleanup();
      await upstream?.close();
      if (pressureFile !== '') fs.rmSync(path.dirname(pressureFile), { recursive: true, force: true });
    });

    /** Writes the pressure, then waits until the gauges show it and every worker acts on it. */
    const setPressure = async (value: string, percent: number, actives: { keepalive: number; requests: number; connections?: number }) => {
      fs.writeFileSync(pressureFile, value);
      await waitFor(`pressure ${percent}`, async () => ((await proxy.stat(`overload.${INJECTED}.pressure`)) === percent ? true : undefined));
      assert.equal(await proxy.stat(`overload.${NO_KEEPALIVE}.active`), actives.keepalive);
      assert.equal(await proxy.stat(`overload.${STOP_REQUESTS}.active`), actives.requests);
      assert.equal(await proxy.stat(`overload.${STOP_CONNECTIONS}.active`), actives.connections ?? 0);
      // The gauges show the highest worker's; each worker reads the file at its own refresh.
      await new Promise((resolve) => setTimeout(resolve, 200));
    };

    test('below every threshold, requests are served and connections kept alive', async () => {
      await setPressure('0', 0, { keepalive: 0, requests: 0 });
      const reply = await request(port, { agent });
      assert.equal(reply.status, 200);
      assert.notEqual(reply.headers.connection, 'close');
      assert.equal((await h2Request(session)).status, 200);
    });

    test('disable_http_keepalive: HTTP/1.1 responses close their connection, h2c is untouched', async () => {
      await setPressure('0.6', 60, { keepalive: 1, requests: 0 });
      const before = (await proxy.stat('http.in.downstream_cx_overload_disable_keepalive')) ?? 0;
      for (let i = 0; i < 4; i++) {
        const reply = await request(port, { agent });
        assert.equal(reply.status, 200);
        assert.equal(reply.headers.connection, 'close');
      }
      assert.equal(await proxy.stat('http.in.downstream_cx_overload_disable_keepalive'), before + 4);
      assert.equal((await h2Request(session)).status, 200);
    });

    test('stop_accepting_requests: 503 with x-proxy-overloaded on both protocols, counted; service comes back below it', async () => {
      await setPressure('0.95', 95, { keepalive: 1, requests: 1 });
      const before = (await proxy.stat('http.in.downstream_rq_overload_close')) ?? 0;
      const upstreamSeen = upstream.seen.length;
      for (let i = 0; i < 4; i++) {
        for (const reply of [await request(port, { agent }), await h2Request(session)]) {
          assert.equal(reply.status, 503);
          assert.equal(reply.headers['x-proxy-overloaded'], 'true');
          assert.equal(reply.body, 'proxy overloaded');
        }
      }
      assert.equal(upstream.seen.length, upstreamSeen, 'nothing reached the upstream');
      assert.equal(await proxy.stat('http.in.downstream_rq_overload_close'), before + 8);
      await setPressure('0.1', 10, { keepalive: 0, requests: 0 });
      assert.equal((await request(port, { agent })).status, 200);
      assert.equal((await h2Request(session)).status, 200);
    });

    test('a file that is not a pressure is a failed update: the last pressure holds', async () => {
      await setPressure('0.95', 95, { keepalive: 1, requests: 1 });
      const failed = (await proxy.stat(`overload.${INJECTED}.failed_updates`)) ?? 0;
      fs.writeFileSync(pressureFile, 'not a number');
      await waitFor('a failed update', async () => (((await proxy.stat(`overload.${INJECTED}.failed_updates`)) ?? 0) > failed ? true : undefined));
      fs.writeFileSync(pressureFile, '1.5');
      const outOfRange = (await proxy.stat(`overload.${INJECTED}.failed_updates`))!;
      await waitFor('another failed update', async () => ((await proxy.stat(`overload.${INJECTED}.failed_updates`))! > outOfRange ? true : undefined));
      assert.equal(await proxy.stat(`overload.${INJECTED}.pressure`), 95);
      assert.equal((await request(port, { agent })).status, 503);
      await setPressure('0', 0, { keepalive: 0, requests: 0 });
      assert.equal((await request(port, { agent })).status, 200);
    });

    test('stop_accepting_connections: a new connection waits in the backlog until the pressure falls', async () => {
      const accepted = async () => (await proxy.stat(`listener.127.0.0.1_${port}.downstream_cx_total`)) ?? 0;
      await setPressure('1', 100, { keepalive: 1, requests: 1, connections: 1 });
      const before = await accepted();
      let answered = false;
      // A connection of its own: the kernel completes the handshake, the proxy does not accept it.
      const waiting = request(port, { agent: new http.Agent({ keepAlive: false }) }).finally(() => (answered = true));
      // Proving that nothing happens takes a bounded wait: ten refreshes of the monitors.
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal(answered, false);
      assert.equal(await accepted(), before);
      await setPressure('0', 0, { keepalive: 0, requests: 0, connections: 0 });
      assert.equal((await waiting).status, 200);
      assert.equal(await accepted(), before + 1);
    });
  });
}

describe('fixed_heap: a worker holding request bodies past the threshold', TIMEOUT, () => {
  const FIXED_HEAP = 'proxy.resource_monitors.fixed_heap';
  const MAX_HEAP = 256 * 1024 * 1024;
  /** What the held requests send: four bodies of 40 MiB, which the buffer filter holds until they end. */
  const HELD = 4;
  const HELD_MIB = 40;
  let upstream: Upstream;
  let proxy: RunningProxy;
  let port = 0;
  let session: http2.ClientHttp2Session;
  const holders: http.ClientRequest[] = [];

  before(async () => {
    upstream = await startUpstream('web');
    const buffer = {
      name: 'envoy.filters.http.buffer',
      typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.buffer.v3.Buffer', max_request_bytes: 64 * 1024 * 1024 },
    };
    const threshold = [{ name: 'envoy.resource_monitors.fixed_heap', threshold: { value: 0.5 } }];
    proxy = await startProxy({
      overload_manager: {
        refresh_interval: '0.05s',
        resource_monitors: [
          {
            name: 'envoy.resource_monitors.fixed_heap',
            typed_config: { '@type': 'type.googleapis.com/envoy.config.resource_monitor.fixed_heap.v2alpha.FixedHeapConfig', max_heap_size_bytes: MAX_HEAP },
          },
        ],
        actions: [
          { name: 'envoy.overload_actions.stop_accepting_requests', triggers: threshold },
          { name: 'envoy.overload_actions.shrink_heap', triggers: threshold },
        ],
      },
      static_resources: {
        listeners: [
          httpListener('in', 0, [{ match: { prefix: '/' }, route: { cluster: 'web' } }], { stat_prefix: 'in', http_filters: [buffer, { name: 'envoy.filters.http.router' }] }),
        ],
        clusters: [localCluster('web', upstream.port)],
      },
    });
    port = await proxy.listenerPort('in');
    session = http2.connect(`http://127.0.0.1:${port}`);
  });

  after(async () => {
    for (const holder of holders) holder.destroy();
    session?.destroy();
    await proxy?.cleanup();
    await upstream?.close();
  });

  const pressure = async () => (await proxy.stat(`overload.${FIXED_HEAP}.pressure`)) ?? -1;

  test('past max_heap_size_bytes * threshold, requests get 503 with x-proxy-overloaded; once the bodies are gone, shrink_heap collects them and service comes back', async () => {
    await waitFor('a first pressure', async () => ((await pressure()) >= 0 ? true : undefined));
    assert.ok((await pressure()) < 50, `idle pressure ${await pressure()}%`);
    assert.equal((await request(port)).status, 200);

    // Requests whose bodies never end: the worker holds every byte of them.
    const mib = Buffer.alloc(1024 * 1024, 'x');
    for (let i = 0; i < HELD; i++) {
      const holder = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/', agent: false, headers: { 'content-length': String(2 * HELD_MIB * mib.length) } });
      holder.on('error', () => undefined);
      for (let j = 0; j < HELD_MIB; j++) holder.write(mib);
      holders.push(holder);
    }
    await waitFor('stop_accepting_requests active', async () => ((await proxy.stat(`overload.${STOP_REQUESTS}.active`)) === 1 ? true : undefined), 30_000);
    assert.ok((await pressure()) >= 50, `loaded pressure ${await pressure()}%`);
    for (const reply of [await request(port), await h2Request(session)]) {
      assert.equal(reply.status, 503);
      assert.equal(reply.headers['x-proxy-overloaded'], 'true');
    }
    assert.equal(await proxy.stat('overload.proxy.overload_actions.shrink_heap.active'), 1);
    // shrink_heap collects and trims every 10 s while active; what is still held stays.
    await waitFor('a shrink', async () => (((await proxy.stat('overload.proxy.overload_actions.shrink_heap.shrink_count')) ?? 0) >= 1 ? true : undefined), 20_000);
    assert.equal((await request(port)).status, 503);

    // The clients give up: the worker lets the bodies go, and the next collection (shrink_heap's at
    // the latest) frees them.
    for (const holder of holders.splice(0)) holder.destroy();
    await waitFor('stop_accepting_requests inactive', async () => ((await proxy.stat(`overload.${STOP_REQUESTS}.active`)) === 0 ? true : undefined), 30_000);
    assert.ok((await pressure()) < 50);
    assert.equal((await request(port)).status, 200);
    assert.equal((await h2Request(session)).status, 200);
  });
});

describe('the runtime key overload.global_downstream_max_connections, across two workers', TIMEOUT, () => {
  let upstream: Upstream;
  let proxy: RunningProxy;
  let port = 0;
  const sessions: http2.ClientHttp2Session[] = [];

  before(async () => {
    upstream = await startUpstream('web');
    proxy = await startProxy(
      {
        static_resources: {
          listeners: [httpListener('in', 0, [{ match: { prefix: '/' }, route: { cluster: 'web' } }], { stat_prefix: 'in' })],
          clusters: [localCluster('web', upstream.port)],
        },
        // In the bootstrap, so that both workers have the limit before the first connection
        // (/runtime_modify reaches the workers a message later than its answer).
        layered_runtime: { layers: [{ name: 'static', static_layer: { 'overload.global_downstream_max_connections': 2 } }] },
      },
      ['--concurrency', '2'],
    );
    port = await proxy.listenerPort('in');
  });

  after(async () => {
    for (const session of sessions) session.destroy();
    await proxy?.cleanup();
    await upstream?.close();
  });

  const open = async (): Promise<http2.ClientHttp2Session> => {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on('error', () => undefined);
    sessions.push(session);
    return session;
  };

  test('past the limit a new connection is closed and counted in downstream_global_cx_overflow; a closed one makes room', async () => {
    // Two connections, whichever workers took them, fill the limit.
    const first = await open();
    const second = await open();
    assert.equal((await h2Request(first)).status, 200);
    assert.equal((await h2Request(second)).status, 200);
    await assert.rejects(request(port));
    // Closed as it was accepted: node:http2 fails the stream, or ends it with no response.
    const overflowed = await h2Request(await open()).catch(() => null);
    assert.ok(overflowed === null || Number.isNaN(overflowed.status), `answered ${overflowed?.status}`);
    await waitFor('two overflows', async () => ((await proxy.stat(`listener.127.0.0.1_${port}.downstream_global_cx_overflow`)) === 2 ? true : undefined));
    first.destroy();
    await waitFor('room for one more', async () => {
      try {
        return (await request(port)).status === 200 ? true : undefined;
      } catch {
        return undefined;
      }
    });
    assert.equal((await h2Request(second)).status, 200);
  });
});
