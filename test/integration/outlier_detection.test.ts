// Outlier detection in the real proxy with two workers: upstreams the test runs answer as each
// case says, the workers count their answers together in shared memory, and the supervisor's
// detector ejects and returns hosts, as GET /clusters and /stats show. Short intervals and
// ejection times; every wait polls the admin with a deadline.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { httpListener } from '../helpers/config_fixtures';
import { startUpstream, type Upstream } from '../helpers/http_peers';
import { request, type RunningProxy, startProxy, waitFor } from '../helpers/proxy_process';

const TIMEOUT = { timeout: 60_000 };

interface Outliers {
  readonly proxy: RunningProxy;
  readonly upstreams: readonly Upstream[];
  /** The status code each upstream answers with now, by index; a function decides per request. */
  readonly answers: (number | (() => number))[];
  /** One request on its own connection, so that both workers take some. */
  send(): Promise<number>;
  /** The hosts (by upstream index) GET /clusters shows with /failed_outlier_check. */
  ejected(): Promise<number[]>;
  stat(name: string): Promise<number>;
  close(): Promise<void>;
}

async function startOutliers(count: number, outlierDetection: Record<string, unknown>): Promise<Outliers> {
  const answers: (number | (() => number))[] = Array.from({ length: count }, () => 200);
  const upstreams: Upstream[] = [];
  for (let i = 0; i < count; i++) {
    upstreams.push(
      await startUpstream(`u${i}`, (_req, res) => {
        const answer = answers[i]!;
        res.statusCode = typeof answer === 'number' ? answer : answer();
        res.end(`u${i}`);
      }),
    );
  }
  const endpoints = upstreams.map((u) => ({ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: u.port } } } }));
  const config = {
    static_resources: {
      listeners: [httpListener('in', 0, [{ match: { prefix: '/' }, route: { cluster: 'backend' } }])],
      clusters: [
        {
          name: 'backend',
          type: 'STATIC',
          connect_timeout: '1s',
          load_assignment: { cluster_name: 'backend', endpoints: [{ lb_endpoints: endpoints }] },
          outlier_detection: outlierDetection,
        },
      ],
    },
  };
  let proxy: RunningProxy;
  try {
    proxy = await startProxy(config, ['--concurrency', '2']);
  } catch (e) {
    await Promise.all(upstreams.map((u) => u.close()));
    throw e;
  }
  const listener = await proxy.listenerPort('in');
  const ports = upstreams.map((u) => `127.0.0.1:${u.port}`);
  return {
    proxy,
    upstreams,
    answers,
    send: async () => (await request(`http://127.0.0.1:${listener}/`, { headers: { connection: 'close' } })).status,
    ejected: async () => {
      const lines = (await proxy.admin('/clusters')).body.split('\n');
      return ports.flatMap((port, i) => (lines.includes(`backend::${port}::health_flags::/failed_outlier_check`) ? [i] : []));
    },
    stat: async (name) => {
      const body = (await proxy.admin(`/stats?filter=${encodeURIComponent(`^cluster\\.backend\\.outlier_detection\\.${name}$`)}`)).body;
      const match = /: (\d+)$/m.exec(body);
      assert.ok(match, `no ${name} in ${body}`);
      return Number(match[1]);
    },
    close: async () => {
      await proxy.cleanup();
      await Promise.all(upstreams.map((u) => u.close()));
    },
  };
}

async function withOutliers(count: number, outlierDetection: Record<string, unknown>, body: (o: Outliers) => Promise<void>): Promise<void> {
  const o = await startOutliers(count, outlierDetection);
  try {
    await body(o);
  } finally {
    await o.close();
  }
}

/** Sends requests one at a time until upstream `index` has received `n` in all. */
async function sendUntilSeen(o: Outliers, index: number, n: number): Promise<void> {
  await waitFor(`${n} requests at u${index}`, async () => {
    if (o.upstreams[index]!.seen.length >= n) return true;
    await o.send();
    return undefined;
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('outlier detection, two workers', TIMEOUT, () => {
  test('five 503s in a row over both workers eject a host; it returns after base_ejection_time, and stays out twice as long the second time', async () => {
    const baseMs = 1000;
    await withOutliers(2, { interval: '0.1s', base_ejection_time: `${baseMs / 1000}s`, max_ejection_percent: 50 }, async (o) => {
      o.answers[0] = 503;
      await sendUntilSeen(o, 0, 4);
      // Four are not a run of five: nothing is waiting to happen.
      assert.deepEqual(await o.ejected(), []);
      await sendUntilSeen(o, 0, 5);
      await waitFor('u0 ejected', async () => ((await o.ejected()).includes(0) ? true : undefined));
      assert.deepEqual(await o.ejected(), [0]);
      assert.equal(await o.stat('ejections_enforced_consecutive_5xx'), 1);
      assert.equal(await o.stat('ejections_active'), 1);

      await waitFor('u0 back', async () => ((await o.ejected()).length === 0 ? true : undefined), 10_000);
      assert.equal(await o.stat('ejections_active'), 0);

      // The second ejection lasts 2 x base: still out well after one base (plus an interval).
      await sendUntilSeen(o, 0, o.upstreams[0]!.seen.length + 5);
      await waitFor('u0 ejected again', async () => ((await o.ejected()).includes(0) ? true : undefined));
      await sleep(baseMs * 1.4);
      assert.deepEqual(await o.ejected(), [0]);
      await waitFor('u0 back again', async () => ((await o.ejected()).length === 0 ? true : undefined), 10_000);
      assert.equal(await o.stat('ejections_enforced_consecutive_5xx'), 2);
    });
  });

  test('success rate: of five hosts, the one failing half its requests is ejected', async () => {
    await withOutliers(
      5,
      { interval: '1s', base_ejection_time: '30s', success_rate_request_volume: 20, consecutive_5xx: 1000, consecutive_gateway_failure: 1000 },
      async (o) => {
        let n = 0;
        o.answers[4] = () => (n++ % 2 === 0 ? 500 : 200);
        // Traffic until an interval has seen enough requests at every host.
        await waitFor(
          'u4 ejected',
          async () => {
            await Promise.all(Array.from({ length: 25 }, () => o.send()));
            return (await o.ejected()).includes(4) ? true : undefined;
          },
          20_000,
        );
        assert.deepEqual(await o.ejected(), [4]);
        assert.equal(await o.stat('ejections_enforced_success_rate'), 1);
        const text = (await o.proxy.admin('/clusters')).body;
        assert.match(text, /^backend::outlier::success_rate_average::[-\d.e+]+$/m);
        assert.match(text, /^backend::outlier::local_origin_success_rate_ejection_threshold::-1$/m);
      },
    );
  });

  test('max_ejection_percent: with every host failing, only 20% of five are ejected; the rest overflow', async () => {
    await withOutliers(5, { interval: '1s', base_ejection_time: '30s', max_ejection_percent: 20 }, async (o) => {
      for (let i = 0; i < 5; i++) o.answers[i] = 500;
      await waitFor('an overflow', async () => {
        await Promise.all(Array.from({ length: 10 }, () => o.send()));
        return (await o.stat('ejections_overflow')) > 0 ? true : undefined;
      });
      assert.equal((await o.ejected()).length, 1);
      assert.equal(await o.stat('ejections_active'), 1);
      assert.equal(await o.stat('ejections_enforced_total'), 1);
    });
  });
});
