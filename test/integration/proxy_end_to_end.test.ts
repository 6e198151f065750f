// The real binary end to end: HTTP and TCP traffic through supervisor and workers, stats
// read back from admin, worker crash recovery, clean shutdown, and malformed configs.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { makeTempDir, request, RunningProxy, spawnProxy, startProxy, waitFor } from '../helpers/proxy_process';

function listen(server: net.Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)));
}

function hcm(statPrefix: string, cluster: string) {
  return {
    name: 'proxy.filters.network.http_connection_manager',
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
      stat_prefix: statPrefix,
      route_config: {
        name: 'local',
        virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster } }] }],
      },
      http_filters: [{ name: 'proxy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } }],
    },
  };
}

function staticCluster(name: string, ports: number[]) {
  return {
    name,
    connect_timeout: '1s',
    type: 'STATIC',
    load_assignment: {
      cluster_name: name,
      endpoints: [{ lb_endpoints: ports.map((port) => ({ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: port } } } })) }],
    },
  };
}

function listener(name: string, filter: unknown) {
  return { name, address: { socket_address: { address: '127.0.0.1', port_value: 0 } }, filter_chains: [{ filters: [filter] }] };
}

describe('proxy binary with two workers', { timeout: 120_000 }, () => {
  let upstream: http.Server;
  let echo: net.Server;
  let proxy: RunningProxy;
  let httpPort: number;
  let tcpPort: number;
  let upstreamHits = 0;

  before(async () => {
    upstream = http.createServer((req, res) => {
      upstreamHits++;
      res.setHeader('x-upstream-saw-xff', String(req.headers['x-forwarded-for'] ?? ''));
      res.end(`hello ${req.url}`);
    });
    echo = net.createServer((s) => s.pipe(s));
    const [up, ec] = await Promise.all([listen(upstream), listen(echo)]);
    proxy = await startProxy(
      {
        static_resources: {
          listeners: [
            listener('http_in', hcm('ingress_http', 'web')),
            listener('tcp_in', {
              name: 'proxy.filters.network.tcp_proxy',
              typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy', stat_prefix: 'echo_tcp', cluster: 'echo' },
            }),
          ],
          clusters: [staticCluster('web', [up]), staticCluster('echo', [ec])],
        },
      },
      ['--concurrency', '2', '--file-flush-interval-msec', '100'],
    );
    httpPort = await proxy.listenerPort('http_in');
    tcpPort = await proxy.listenerPort('tcp_in');
  });

  after(async () => {
    await proxy?.cleanup();
    upstream?.close();
    upstream?.closeAllConnections();
    echo?.close();
  });

  test('HTTP requests reach the upstream and every one is counted across both workers', async () => {
    const n = 40;
    const results = await Promise.all(Array.from({ length: n }, (_, i) => request(`http://127.0.0.1:${httpPort}/r${i}`)));
    results.forEach((r, i) => {
      assert.equal(r.status, 200);
      assert.equal(r.body, `hello /r${i}`);
    });
    assert.equal(upstreamHits, n);
    assert.equal(await proxy.stat('cluster.web.upstream_rq_total'), n);
    assert.equal(await proxy.stat('http.ingress_http.downstream_rq_total'), n);
    assert.equal(await proxy.stat('http.ingress_http.downstream_rq_2xx'), n);
    const clusters = (await proxy.admin('/clusters')).body;
    assert.match(clusters, /^version_info::static\n/);
    assert.match(clusters, new RegExp(`^web::127\\.0\\.0\\.1:\\d+::rq_total::${n}$`, 'm'));
    assert.match(clusters, /^web::127\.0\.0\.1:\d+::health_flags::healthy$/m);
    assert.match(clusters, /^web::127\.0\.0\.1:\d+::weight::1$/m);
    assert.match(clusters, /^web::127\.0\.0\.1:\d+::success_rate::-1\.0$/m);
  });

  test('TCP proxy echoes bytes and counts the connection', async () => {
    const reply = await new Promise<string>((resolve, reject) => {
      const s = net.connect(tcpPort, '127.0.0.1', () => s.end('ping over tcp_proxy'));
      let got = '';
      s.on('data', (c) => (got += c.toString()));
      s.on('end', () => resolve(got));
      s.on('error', reject);
    });
    assert.equal(reply, 'ping over tcp_proxy');
    await waitFor('tcp stats', async () => ((await proxy.stat('tcp.echo_tcp.downstream_cx_total')) === 1 ? true : undefined));
    assert.equal(await proxy.stat('cluster.echo.upstream_cx_total'), 1);
  });

  test("each worker's share of a listener's connections is counted under worker_<index>, the admin's under main_thread", async () => {
    const listenerStat = (name: string) => proxy.stat(`listener.127.0.0.1_${tcpPort}.${name}`);
    const open = await Promise.all(
      Array.from({ length: 10 }, () => new Promise<net.Socket>((resolve, reject) => net.connect(tcpPort, '127.0.0.1').once('connect', function (this: net.Socket) { resolve(this); }).once('error', reject))),
    );
    try {
      await waitFor('the connections counted', async () => ((await listenerStat('downstream_cx_active')) === 10 ? true : undefined));
      const active = await Promise.all([listenerStat('worker_0.downstream_cx_active'), listenerStat('worker_1.downstream_cx_active')]);
      const total = await Promise.all([listenerStat('worker_0.downstream_cx_total'), listenerStat('worker_1.downstream_cx_total')]);
      assert.ok(active.every((value) => value !== undefined) && total.every((value) => value !== undefined), `${active} ${total}`);
      assert.equal(active[0]! + active[1]!, 10);
      assert.equal(total[0]! + total[1]!, await listenerStat('downstream_cx_total'));
    } finally {
      for (const socket of open) socket.destroy();
    }
    await waitFor('the connections gone', async () =>
      (await listenerStat('worker_0.downstream_cx_active')) === 0 && (await listenerStat('worker_1.downstream_cx_active')) === 0 ? true : undefined,
    );
    // One request reads both: each read of the admin is a connection of its own.
    const admin = (await proxy.admin('/stats?filter=^listener\\.admin\\.(main_thread\\.)?downstream_cx_total$')).body;
    const [, listener, handler] = /^listener\.admin\.downstream_cx_total: (\d+)\nlistener\.admin\.main_thread\.downstream_cx_total: (\d+)\n$/.exec(admin) ?? [];
    assert.ok(Number(handler) > 0, admin);
    assert.equal(handler, listener);
  });

  test("workers keep 64 MiB of freed heap (glibc's top pad); the supervisor runs in the operator's environment", () => {
    const environ = (pid: number) => fs.readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0');
    const workers = proxy.groupPids().filter((p) => p !== proxy.pid);
    assert.equal(workers.length, 2);
    for (const pid of workers) assert.ok(environ(pid).includes('MALLOC_TOP_PAD_=67108864'), `worker ${pid}`);
    assert.ok(!environ(proxy.pid).some((v) => v.startsWith('MALLOC_TOP_PAD_=')));
  });

  test('a worker killed with SIGKILL comes back, traffic continues, worker_restarts is 1', async () => {
    const workers = proxy.groupPids().filter((p) => p !== proxy.pid);
    assert.equal(workers.length, 2);
    process.kill(workers[0]!, 'SIGKILL');
    for (let i = 0; i < 20; i++) assert.equal((await request(`http://127.0.0.1:${httpPort}/after`)).status, 200);
    await waitFor('the replacement worker', () => {
      const now = proxy.groupPids().filter((p) => p !== proxy.pid);
      return now.length === 2 && !now.includes(workers[0]!) ? true : undefined;
    });
    assert.equal(await proxy.stat('server.worker_restarts'), 1);
    assert.equal((await request(`http://127.0.0.1:${httpPort}/again`)).status, 200);
  });

  test('admin: server_info, ready, help, home page, unknown path, access log', async () => {
    const info = (await proxy.admin('/server_info')).body;
    assert.match(info, /^proxy [0-9a-f]{40}\/(RELEASE|DEBUG) live \d+ \d+ 0\n$/);
    assert.deepEqual(await proxy.admin('/ready').then((r) => [r.status, r.body]), [200, 'LIVE\n']);
    const help = (await proxy.admin('/help')).body;
    assert.match(help, /^admin commands are:\n {2}\/: Admin home page\n/);
    assert.match(help, /^ {2}\/quitquitquit: exit the server$/m);
    const home = await proxy.admin('/');
    assert.equal(home.headers['content-type'], 'text/html; charset=UTF-8');
    assert.match(home.body, /<a href='stats'>stats<\/a>/);
    assert.match(home.body, /<form action='quitquitquit' method='post'/);
    const missing = await proxy.admin('/nope');
    assert.equal(missing.status, 404);
    assert.equal(missing.body, 'invalid path. ' + help);
    const stats = (await proxy.admin('/stats')).body.split('\n').filter(Boolean);
    // Counters and gauges by name, then histograms by name (Envoy's order).
    const isHistogram = (line: string) => / P0\(|: No recorded values$/.test(line);
    const scalars = stats.filter((l) => !isHistogram(l)).map((l) => l.slice(0, l.indexOf(': ')));
    const histograms = stats.filter(isHistogram).map((l) => l.slice(0, l.indexOf(': ')));
    assert.deepEqual(stats, [...stats.filter((l) => !isHistogram(l)), ...stats.filter(isHistogram)]);
    assert.deepEqual(scalars, [...scalars].sort());
    assert.deepEqual(histograms, [...histograms].sort());
    assert.ok(histograms.includes('cluster.web.upstream_rq_time'));
    assert.ok(stats.includes('server.live: 1'));
    assert.ok(stats.includes('server.concurrency: 2'));
    // The access log is flushed every --file-flush-interval-msec (100 ms for this proxy).
    const line = /^\[\d{4}-\d\d-\d\dT[^\]]+\] "GET \/server_info HTTP\/1\.1" 200 - 0 \d+ \d+ - "-" "-" "-" "127\.0\.0\.1:\d+" "-"$/m;
    await waitFor('the admin access log line', () => (line.test(fs.readFileSync(path.join(proxy.dir, 'admin_access.log'), 'utf8')) ? true : undefined));
  });

  test('admin /stats?filter= is RE2: linear on (\\w+)+!, an invalid one is a one-line 400', async () => {
    const answer = (query: string) => proxy.admin(`/stats?filter=${query}`).then((r) => [r.status, r.body]);
    assert.deepEqual(await answer('(?i)^SERVER\\.LIVE$'), [200, 'server.live: 1\n']);
    assert.deepEqual(await answer('(\\w%2B)%2B!'), [200, '']);
    assert.deepEqual(await answer('(abc'), [400, 'Invalid regex: "missing closing )"\n']);
    assert.deepEqual(await answer('server(%3F!\\.live)'), [400, 'Invalid regex: "invalid or unsupported Perl syntax: (?!"\n']);
  });
});

describe('shutdown', { timeout: 60_000 }, () => {
  const minimal = { static_resources: { listeners: [], clusters: [] } };

  test('POST /quitquitquit exits 0 and leaves no process behind', async () => {
    const proxy = await startProxy(minimal, ['--concurrency', '2']);
    try {
      const pids = proxy.groupPids();
      assert.equal(pids.length, 3);
      assert.equal((await proxy.admin('/quitquitquit', 'POST')).body, 'OK\n');
      assert.deepEqual(await proxy.exited, { code: 0, signal: null });
      await waitFor('workers to exit', () => (pids.every((p) => !fs.existsSync(`/proc/${p}`)) ? true : undefined));
    } finally {
      await proxy.cleanup();
    }
  });

  test('SIGTERM exits 0 and leaves no process behind', async () => {
    const proxy = await startProxy(minimal, ['--concurrency', '2']);
    try {
      const pids = proxy.groupPids();
      process.kill(proxy.pid, 'SIGTERM');
      assert.deepEqual(await proxy.exited, { code: 0, signal: null });
      await waitFor('workers to exit', () => (pids.every((p) => !fs.existsSync(`/proc/${p}`)) ? true : undefined));
    } finally {
      await proxy.cleanup();
    }
  });
});

describe('malformed configuration', { timeout: 60_000 }, () => {
  const cases: { name: string; text: string; error: RegExp }[] = [
    { name: 'YAML syntax error', text: 'static_resources:\n  clusters: [\n', error: /bootstrap\.yaml.*line \d+/ },
    {
      name: 'unknown cluster in a route',
      text: JSON.stringify({ static_resources: { listeners: [listener('l', hcm('h', 'missing'))], clusters: [] } }),
      error: /static_resources\.listeners\[0\].*unknown cluster 'missing'/,
    },
    {
      name: 'missing required field',
      text: JSON.stringify({ static_resources: { clusters: [{ ...staticCluster('x', [1]), name: undefined }] } }),
      error: /static_resources\.clusters\[0\]\.name/,
    },
  ];
  for (const c of cases) {
    test(`${c.name}: exit 1, one line naming the field, nothing left running`, async () => {
      const dir = makeTempDir();
      const file = path.join(dir, 'bootstrap.yaml');
      fs.writeFileSync(file, c.text);
      const proxy = spawnProxy(['-c', file, '--disable-hot-restart'], { dir });
      try {
        assert.deepEqual(await proxy.exited, { code: 1, signal: null });
        assert.match(proxy.stderr, c.error);
        assert.equal(proxy.stderr.trim().split('\n').length, 1, proxy.stderr);
        assert.deepEqual(proxy.groupPids(), []);
      } finally {
        await proxy.cleanup();
      }
    });
  }
});

test('--mode validate prints one line per invalid resource; capabilities are checked once the config is valid', { timeout: 30_000 }, async () => {
  const dir = makeTempDir();
  const file = path.join(dir, 'bootstrap.json');
  fs.writeFileSync(file, JSON.stringify({
    static_resources: {
      listeners: [listener('l', hcm('h', 'missing'))],
      clusters: [{ ...staticCluster('x', [1]), health_checks: [{ timeout: '1s', interval: '1s', unhealthy_threshold: 1, healthy_threshold: 1, tcp_health_check: {}, tls_options: {} }] }],
    },
  }));
  const loadErrors = spawnProxy(['--mode', 'validate', '-c', file], { dir });
  try {
    assert.equal((await loadErrors.exited).code, 1);
    assert.equal(loadErrors.stdout, '');
    const lines = loadErrors.stderr.trim().split('\n');
    assert.equal(lines.length, 1, loadErrors.stderr);
    assert.match(lines[0]!, /static_resources\.listeners\[0\].*unknown cluster 'missing'/);
  } finally {
    await loadErrors.cleanup();
  }
  const dir2 = makeTempDir();
  const file2 = path.join(dir2, 'bootstrap.json');
  fs.writeFileSync(file2, JSON.stringify({
    static_resources: {
      clusters: [
        { ...staticCluster('a', [1]), lb_policy: 'LEAST_REQUEST', least_request_lb_config: { slow_start_config: { slow_start_window: '10s' } } },
        { ...staticCluster('b', [1]), health_checks: [{ timeout: '1s', interval: '1s', unhealthy_threshold: 1, healthy_threshold: 1, tcp_health_check: {}, tls_options: {} }] },
      ],
    },
  }));
  const capability = spawnProxy(['--mode', 'validate', '-c', file2], { dir: dir2 });
  try {
    assert.equal((await capability.exited).code, 1);
    const lines = capability.stderr.trim().split('\n');
    assert.equal(lines.length, 2, capability.stderr);
    assert.match(lines[0]!, /static_resources\.clusters\[0\]\.least_request_lb_config\.slow_start_config: slow_start_config is not implemented/);
    assert.match(lines[1]!, /static_resources\.clusters\[1\]\.health_checks\[0\]\.tls_options: tls_options is not implemented/);
  } finally {
    await capability.cleanup();
  }
});

describe('--local-address-ip-version reaches x-forwarded-for', { timeout: 60_000 }, () => {
  for (const version of ['v4', 'v6'] as const) {
    test(`${version}: a loopback peer is replaced by the server's ${version} local address`, async () => {
      let seen = '';
      const upstream = http.createServer((req, res) => {
        seen = String(req.headers['x-forwarded-for']);
        res.end('ok');
      });
      const port = await listen(upstream);
      const filter = hcm('xff', 'web');
      (filter.typed_config as Record<string, unknown>).use_remote_address = true;
      const proxy = await startProxy(
        { static_resources: { listeners: [listener('http_in', filter)], clusters: [staticCluster('web', [port])] } },
        ['--local-address-ip-version', version],
      );
      try {
        const r = await request(`http://127.0.0.1:${await proxy.listenerPort('http_in')}/`);
        assert.equal(r.status, 200);
        const info = JSON.parse((await proxy.admin('/server_info?format=json')).body) as { local_address: string };
        assert.equal(seen, info.local_address);
        assert.ok(version === 'v4' ? net.isIPv4(seen) : net.isIPv6(seen), seen);
      } finally {
        await proxy.cleanup();
        upstream.close();
      }
    });
  }
});
