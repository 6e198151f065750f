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
    const setPressure = async (value: string, percent: number, actives: { keepalive: number; requests: number }) => {
      fs.writeFileSync(pressureFile, value);
      await waitFor(`pressure ${percent}`, async () => ((await proxy.stat(`overload.${INJECTED}.pressure`)) === percent ? true : undefined));
      assert.equal(await proxy.stat(`overload.${NO_KEEPALIVE}.active`), actives.keepalive);
      assert.equal(await proxy.stat(`overload.${STOP_REQUESTS}.active`), actives.requests);
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
  });
}
