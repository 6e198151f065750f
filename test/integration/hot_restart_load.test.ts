// Issue 4's bar: five hot restarts through scripts/hot-restarter under continuous keep-alive
// load lose no request, keep the listener port, and keep every counter monotonic and exact;
// a TCP proxy connection opened before a restart lives until --parent-shutdown-time-s.

import assert from 'node:assert/strict';
import * as http from 'node:http';
import * as net from 'node:net';
import { test } from 'node:test';
import { freePort } from '../../bench/free_port';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import { listen } from '../helpers/http_peers';
import { HotRestarterRun, runLoad, sleep, statsOf } from '../helpers/hot_restart_run';
import { request } from '../helpers/proxy_process';

test('five hot restarts under keep-alive load lose nothing', { timeout: 120_000 }, async (t) => {
  // `/late` answers 201: a status, and so a stat name, that appears only after the restarts.
  const upstream = http.createServer((req, res) => {
    if (req.url === '/late') res.statusCode = 201;
    res.end('ok');
  });
  upstream.keepAliveTimeout = 60_000;
  const echo = net.createServer((s) => s.pipe(s));
  const [upPort, echoPort, httpPort, tcpPort] = [await listen(upstream), await listen(echo), await freePort(), await freePort()];
  const config = {
    admin: { access_log_path: '/dev/null', address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
    static_resources: {
      listeners: [
        httpListener('http_in', httpPort, [{ match: { prefix: '/' }, route: { cluster: 'web' } }]),
        {
          name: 'tcp_in',
          address: { socket_address: { address: '127.0.0.1', port_value: tcpPort } },
          filter_chains: [{ filters: [{ name: 'proxy.filters.network.tcp_proxy', typed_config: {
            '@type': 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy', stat_prefix: 'echo', cluster: 'echo',
          } }] }],
        },
      ],
      clusters: [localCluster('web', upPort), localCluster('echo', echoPort)],
    },
  };
  const parentShutdownS = 3;
  const run = HotRestarterRun.withBootstrap(config, [
    '--concurrency', '2', '--drain-time-s', '2', '--drain-strategy', 'gradual', '--parent-shutdown-time-s', String(parentShutdownS),
  ]);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 20 });
  let load: ReturnType<typeof runLoad> | undefined;
  try {
    let admin = await run.adminOf(0);

    // The TCP connection of epoch 0 must outlive the first restart until parent shutdown.
    const tcp = net.connect(tcpPort, '127.0.0.1');
    await new Promise((r) => tcp.once('connect', r));
    const tcpClosed = new Promise<number>((resolve) => tcp.once('close', () => resolve(Date.now())));
    const echoOnce = (text: string) =>
      new Promise<string>((resolve) => {
        tcp.once('data', (d) => resolve(d.toString()));
        tcp.write(text);
      });
    assert.equal(await echoOnce('before'), 'before');

    load = runLoad(20, async () => {
      const r = await request(`http://127.0.0.1:${httpPort}/load`, { agent });
      return r.status === 200 && r.body === 'ok' ? 'ok' : `status ${r.status}: ${r.body}`;
    });

    const samples: number[] = [];
    let firstRestartAt = 0;
    for (let epoch = 1; epoch <= 5; epoch++) {
      await sleep(300);
      samples.push((await statsOf(admin)).get('cluster.web.upstream_rq_total') ?? 0);
      run.signal('SIGHUP');
      admin = await run.adminOf(epoch);
      // Epoch 1 starts its parent shutdown timer just before it answers /ready: a slow start
      // on a loaded machine must not count as the parent's lifetime.
      if (epoch === 1) firstRestartAt = Date.now();
      samples.push((await statsOf(admin)).get('cluster.web.upstream_rq_total') ?? 0);
      if (epoch === 1) {
        // Epoch 0 still carries the TCP connection, until the parent shutdown time ends it.
        assert.equal(await echoOnce('after restart'), 'after restart');
        const closedAt = await tcpClosed;
        const lived = closedAt - firstRestartAt;
        assert.ok(lived >= parentShutdownS * 1000 - 500 && lived < parentShutdownS * 1000 + 3000, `closed after ${lived} ms`);
      }
      await sleep(1200);
    }
    const answers = await load.stop();
    const completed = answers.filter((a) => a === 'ok').length;
    const failures = answers.filter((a) => a !== 'ok');
    const LATE = 7;
    for (let i = 0; i < LATE; i++) assert.equal((await request(`http://127.0.0.1:${httpPort}/late`, { agent })).status, 201);
    const stats = await statsOf(admin);

    t.diagnostic(`${completed} requests completed across 5 restarts; counter samples ${samples.join(' ')}`);
    assert.deepEqual(failures, []);
    assert.ok(completed > 500, `only ${completed} requests completed`);
    for (let i = 1; i < samples.length; i++) assert.ok(samples[i]! >= samples[i - 1]!, `counter went back: ${samples.join(', ')}`);
    assert.equal(stats.get('cluster.web.upstream_rq_total'), completed + LATE);
    assert.equal(stats.get('http.ingress_http.downstream_rq_total'), completed + LATE);
    // A stat created by the last epoch counts like the others.
    assert.equal(stats.get('cluster.web.upstream_rq_201'), LATE);
    assert.equal(stats.get('cluster.web.upstream_rq_200'), completed);
    assert.equal(stats.get('server.hot_restart_generation'), 6);
    assert.equal(stats.get('server.hot_restart_epoch'), 5);
    const listeners = (await request(`${admin}/listeners`)).body;
    assert.match(listeners, new RegExp(`^http_in::127\\.0\\.0\\.1:${httpPort}$`, 'm'));

    assert.match(run.log(0), /shutting down admin due to child startup/);
    assert.match(run.log(1), /shutting down parent after drain/);

    run.signal('SIGTERM');
    assert.equal(await run.exited, 0);
    assert.match(run.output, /all children exited cleanly/);
  } finally {
    await load?.stop();
    agent.destroy();
    await run.cleanup();
    upstream.closeAllConnections();
    upstream.close();
    echo.close();
  }
});
