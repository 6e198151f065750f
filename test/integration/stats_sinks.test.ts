// The bootstrap's stats sinks on a real proxy, flushed every 200 ms by its supervisor: statsd
// over UDP and over TCP through a static cluster, DogStatsD with datagrams gathered up to a size,
// and the gRPC MetricsService at both of its versions, each to a receiver the test runs. Traffic
// through a listener shows counters sent as increases that add up to the counter, gauges,
// a timer line per request, tags, and the node on the first message of each gRPC stream. Then
// --mode validate refuses what a start would, and a hot restart counts each request once.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { freePort } from '../../bench/free_port';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import { startUpstream, type Upstream } from '../helpers/http_peers';
import { runToExit } from '../helpers/cli_runs';
import { HotRestarterRun, statsOf } from '../helpers/hot_restart_run';
import { makeTempDir, request, type RunningProxy, sleep, startProxy, waitFor } from '../helpers/proxy_process';
import { MetricsServiceServer, TcpStatsdServer, UdpStatsdServer, type MetricFamilyMessage } from '../helpers/stats_sink_peers';

const TIMEOUT = { timeout: 90_000 };
const FLUSH_MS = 200;
const REQUESTS = 5;
const STATSD_TYPE = 'type.googleapis.com/envoy.config.metrics.v3.StatsdSink';
const DOG_STATSD_TYPE = 'type.googleapis.com/envoy.config.metrics.v3.DogStatsdSink';
const METRICS_SERVICE_TYPE = 'type.googleapis.com/envoy.config.metrics.v3.MetricsServiceConfig';
const V3_PATH = '/envoy.service.metrics.v3.MetricsService/StreamMetrics';
const V2_PATH = '/envoy.service.metrics.v2.MetricsService/StreamMetrics';
const MAX_DATAGRAM = 512;

const udpAddress = (port: number) => ({ socket_address: { address: '127.0.0.1', port_value: port, protocol: 'UDP' } });

/** The values of the lines matching `<name>:<value>|<rest>` exactly. */
function valuesOf(lines: readonly string[], name: string, rest: string): number[] {
  const prefix = `${name}:`;
  const suffix = `|${rest}`;
  return lines.filter((line) => line.startsWith(prefix) && line.endsWith(suffix)).map((line) => Number(line.slice(prefix.length, -suffix.length)));
}

const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

describe('stats sinks flushed by the supervisor', TIMEOUT, () => {
  let upstream: Upstream;
  let udp: UdpStatsdServer;
  let dog: UdpStatsdServer;
  let tcp: TcpStatsdServer;
  let metrics: MetricsServiceServer;
  let proxy: RunningProxy;

  before(async () => {
    upstream = await startUpstream('backend');
    udp = await UdpStatsdServer.start();
    dog = await UdpStatsdServer.start();
    tcp = await TcpStatsdServer.start();
    metrics = await MetricsServiceServer.start();
    proxy = await startProxy({
      node: { id: 'sinks-test', cluster: 'sinks' },
      stats_flush_interval: `${FLUSH_MS / 1000}s`,
      static_resources: {
        listeners: [httpListener('in', 0, [{ match: { prefix: '/' }, route: { cluster: 'backend' } }])],
        clusters: [
          localCluster('backend', upstream.port),
          localCluster('statsd_tcp', tcp.port),
          { ...localCluster('metrics', metrics.port), http2_protocol_options: {} },
        ],
      },
      stats_sinks: [
        { name: 'envoy.statsd', config: { address: udpAddress(udp.port), prefix: 'udp' } },
        { name: 'envoy.stat_sinks.statsd', typed_config: { '@type': STATSD_TYPE, tcp_cluster_name: 'statsd_tcp' } },
        { name: 'envoy.stat_sinks.dog_statsd', typed_config: { '@type': DOG_STATSD_TYPE, address: udpAddress(dog.port), max_bytes_per_datagram: MAX_DATAGRAM } },
        {
          name: 'envoy.stat_sinks.metrics_service',
          typed_config: { '@type': METRICS_SERVICE_TYPE, grpc_service: { envoy_grpc: { cluster_name: 'metrics' } }, transport_api_version: 'V3' },
        },
        // AUTO: V2, as in Envoy 1.16.
        {
          name: 'envoy.metrics_service',
          typed_config: { '@type': METRICS_SERVICE_TYPE, grpc_service: { envoy_grpc: { cluster_name: 'metrics' } }, report_counters_as_deltas: true },
        },
      ],
    });
    const port = await proxy.listenerPort('in');
    for (let i = 0; i < REQUESTS; i++) assert.equal((await request(`http://127.0.0.1:${port}/`)).status, 200);
    assert.equal(await proxy.stat('cluster.backend.upstream_rq_total'), REQUESTS);
  });

  after(async () => {
    await proxy?.cleanup();
    await upstream?.close();
    await udp?.close();
    await dog?.close();
    await tcp?.close();
    metrics?.close();
  });

  test('statsd over TCP: counter increases that add up to the counter, then zeros; gauges; a timer line per request', async () => {
    const rq = 'proxy.cluster.backend.upstream_rq_total';
    await waitFor('the requests in the TCP statsd lines', () => (sum(valuesOf(tcp.lines(), rq, 'c')) === REQUESTS ? true : undefined));
    // Later flushes send the counter with nothing gained.
    const seen = valuesOf(tcp.lines(), rq, 'c').length;
    await waitFor('two more flushes', () => (valuesOf(tcp.lines(), rq, 'c').length >= seen + 2 ? true : undefined));
    const values = valuesOf(tcp.lines(), rq, 'c');
    assert.equal(sum(values), REQUESTS);
    assert.deepEqual(values.slice(-2), [0, 0]);
    assert.ok(values.length > 2, 'a line at every flush');
    assert.deepEqual([...new Set(valuesOf(tcp.lines(), 'proxy.cluster.backend.membership_total', 'g'))], [1]);
    assert.deepEqual([...new Set(valuesOf(tcp.lines(), 'proxy.server.concurrency', 'g'))], [1]);
    await waitFor('a timer line per request', () => (valuesOf(tcp.lines(), 'proxy.cluster.backend.upstream_rq_time', 'ms').length === REQUESTS ? true : undefined));
    // A counter never written to is not sent.
    assert.equal(valuesOf(tcp.lines(), 'proxy.cluster.backend.upstream_rq_timeout', 'c').length, 0);
    assert.equal(tcp.connections, 1, 'one connection for every flush');
  });

  test('statsd over UDP: a line per datagram, full names under its prefix', async () => {
    await waitFor('counter, gauge and timer datagrams', () => {
      const lines = udp.lines();
      return valuesOf(lines, 'udp.cluster.backend.upstream_rq_total', 'c').length > 0 &&
        valuesOf(lines, 'udp.server.concurrency', 'g').includes(1) &&
        valuesOf(lines, 'udp.cluster.backend.upstream_rq_time', 'ms').length > 0
        ? true
        : undefined;
    });
    assert.ok(udp.datagrams.every((datagram) => !datagram.includes('\n')), 'one line per datagram');
    assert.ok(valuesOf(udp.lines(), 'udp.cluster.backend.upstream_rq_total', 'c').every((v) => v >= 0 && v <= REQUESTS));
  });

  test('DogStatsD: tag-extracted names with their tags, lines gathered into datagrams up to max_bytes_per_datagram', async () => {
    await waitFor('tagged counter and timer lines', () => {
      const lines = dog.lines();
      return valuesOf(lines, 'proxy.cluster.upstream_rq_total', 'c|#proxy.cluster_name:backend').length > 0 &&
        valuesOf(lines, 'proxy.cluster.upstream_rq_time', 'ms|#proxy.cluster_name:backend').length > 0
        ? true
        : undefined;
    });
    const lines = dog.lines();
    assert.ok(valuesOf(lines, 'proxy.cluster.upstream_rq_xx', 'c|#proxy.response_code_class:2,proxy.cluster_name:backend').length > 0);
    assert.ok(valuesOf(lines, 'proxy.server.concurrency', 'g').includes(1), 'a stat without tags has none after its type');
    const gathered = dog.datagrams.filter((datagram) => !datagram.includes('|ms'));
    assert.ok(gathered.some((datagram) => datagram.includes('\n')), 'several lines in a datagram');
    assert.ok(dog.datagrams.every((datagram) => Buffer.byteLength(datagram) <= MAX_DATAGRAM), 'none larger than max_bytes_per_datagram');
    // Timers go one per datagram, as Envoy sends them.
    assert.ok(dog.datagrams.filter((datagram) => datagram.includes('|ms')).every((datagram) => !datagram.includes('\n')));
  });

  test('MetricsService V3: the node on the first message, counter values, gauges, summaries and histograms of each interval', async () => {
    const family = (name: string, type: MetricFamilyMessage['type']) => (m: MetricFamilyMessage) => m.name === name && m.type === type;
    await waitFor('the requests in the histograms sent', () => {
      const histograms = metrics.messages(V3_PATH).flatMap((m) => m.envoy_metrics.filter(family('cluster.backend.upstream_rq_time', 'HISTOGRAM')));
      return sum(histograms.map((h) => h.metric[0]!.histogram!.sample_count)) === REQUESTS ? true : undefined;
    });
    const [first, ...rest] = metrics.messages(V3_PATH);
    assert.equal(first!.identifier?.node.id, 'sinks-test');
    assert.equal(first!.identifier?.node.cluster, 'sinks');
    assert.ok(rest.length > 0 && rest.every((m) => m.identifier === undefined), 'the node on the first message only');
    const last = rest.at(-1)!.envoy_metrics;
    const counter = last.find(family('cluster.backend.upstream_rq_total', 'COUNTER'))!;
    assert.equal(counter.metric[0]!.counter!.value, REQUESTS, 'the counter, not its increase');
    assert.ok(Math.abs(counter.metric[0]!.timestamp_ms - Date.now()) < 60_000);
    assert.equal(last.find(family('server.concurrency', 'GAUGE'))!.metric[0]!.gauge!.value, 1);
    const summary = last.find(family('cluster.backend.upstream_rq_time', 'SUMMARY'))!.metric[0]!.summary!;
    assert.deepEqual(summary.quantile.map((q) => q.quantile), [0, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.995, 0.999, 1]);
    const buckets = last.find(family('cluster.backend.upstream_rq_time', 'HISTOGRAM'))!.metric[0]!.histogram!.bucket;
    assert.deepEqual(buckets.map((b) => b.upper_bound).slice(0, 3), [0.5, 1, 5]);
  });

  test('MetricsService AUTO is V2, with report_counters_as_deltas: increases that add up to the counter', async () => {
    const increases = () =>
      metrics.messages(V2_PATH).flatMap((m) => m.envoy_metrics.filter((f) => f.name === 'cluster.backend.upstream_rq_total').map((f) => f.metric[0]!.counter!.value));
    await waitFor('the requests in the increases sent', () => (sum(increases()) === REQUESTS && increases().at(-1) === 0 ? true : undefined));
    assert.equal(metrics.messages(V2_PATH)[0]!.identifier?.node.id, 'sinks-test');
  });

  test('a stream the server ends is opened again at the next flush, its first message with the node', async () => {
    const opened = metrics.streams.length;
    for (const stream of metrics.streams) stream.end();
    await waitFor('new streams', () => (metrics.streams.length >= opened + 2 && metrics.streams.slice(opened).every((s) => s.messages.length > 0) ? true : undefined));
    for (const stream of metrics.streams.slice(opened)) assert.equal(stream.messages[0]!.identifier?.node.id, 'sinks-test', stream.path);
    assert.deepEqual(new Set(metrics.streams.slice(opened).map((s) => s.path)), new Set([V2_PATH, V3_PATH]));
  });

  test('the sinks go on when a receiver is gone, and the proxy serves', async () => {
    await udp.close();
    await sleep(3 * FLUSH_MS);
    assert.equal((await proxy.admin('/ready')).status, 200);
    udp = await UdpStatsdServer.start();
  });
});

describe('--mode validate refuses what a start would', TIMEOUT, () => {
  const validate = async (bootstrap: unknown, args: readonly string[] = []) => {
    const dir = makeTempDir();
    try {
      const file = path.join(dir, 'bootstrap.json');
      fs.writeFileSync(file, JSON.stringify(bootstrap));
      return await runToExit(['--mode', 'validate', '-c', file, ...args]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  };

  test('a TCP statsd sink without a node identity, unless the command line gives one', async () => {
    const bootstrap = {
      static_resources: { clusters: [localCluster('statsd_tcp', 8125)] },
      stats_sinks: [{ name: 'envoy.statsd', typed_config: { '@type': STATSD_TYPE, tcp_cluster_name: 'statsd_tcp' } }],
    };
    const refused = await validate(bootstrap);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /stats_sinks\[0\]: tcp statsd: node 'id' and 'cluster' are required/);
    const given = await validate(bootstrap, ['--service-node', 'n', '--service-cluster', 'c']);
    assert.equal(given.code, 0, given.stderr);
    assert.match(given.stdout, /OK/);
  });

  test('a sink this build does not have, and a field it would ignore', async () => {
    const unknown = await validate({ stats_sinks: [{ name: 'envoy.stat_sinks.hystrix' }] });
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /stats_sinks\[0\]\.name: Didn't find a registered implementation for name: 'proxy\.stat_sinks\.hystrix'/);
    const service = { google_grpc: { target_uri: '127.0.0.1:1', stat_prefix: 'p' } };
    const ignored = await validate({ stats_sinks: [{ name: 'envoy.metrics_service', typed_config: { '@type': METRICS_SERVICE_TYPE, grpc_service: service, emit_tags_as_labels: true } }] });
    assert.equal(ignored.code, 1);
    assert.match(ignored.stderr, /stats_sinks\[0\]\.typed_config\.emit_tags_as_labels: emit_tags_as_labels is not implemented by this build yet \(it would be ignored\)/);
  });
});

test('across a hot restart, each request is counted once: the parent stops sending when the child starts, which sends from there', { timeout: 120_000 }, async (t) => {
  const upstream = await startUpstream('backend');
  t.after(() => upstream.close());
  const tcp = await TcpStatsdServer.start();
  t.after(() => tcp.close());
  const httpPort = await freePort();
  const run = HotRestarterRun.withBootstrap(
    {
      node: { id: 'sinks-restart', cluster: 'sinks' },
      admin: { access_log_path: '/dev/null', address: { socket_address: { address: '127.0.0.1', port_value: 0 } } },
      stats_flush_interval: `${FLUSH_MS / 1000}s`,
      static_resources: {
        listeners: [httpListener('in', httpPort, [{ match: { prefix: '/' }, route: { cluster: 'backend' } }])],
        clusters: [localCluster('backend', upstream.port), localCluster('statsd_tcp', tcp.port)],
      },
      stats_sinks: [{ name: 'envoy.statsd', typed_config: { '@type': STATSD_TYPE, tcp_cluster_name: 'statsd_tcp' } }],
    },
    ['--concurrency', '1', '--drain-time-s', '1', '--parent-shutdown-time-s', '2'],
  );
  t.after(() => run.cleanup());
  const send = async (count: number) => {
    for (let i = 0; i < count; i++) assert.equal((await request(`http://127.0.0.1:${httpPort}/`, { headers: { connection: 'close' } })).status, 200);
  };
  const sent = () => sum(valuesOf(tcp.lines(), 'proxy.cluster.backend.upstream_rq_total', 'c'));

  await run.adminOf(0);
  const [parent] = run.supervisorPids();
  await send(3);
  await waitFor("the parent's increases", () => (sent() === 3 ? true : undefined));
  run.signal('SIGHUP');
  const admin1 = await run.adminOf(1, 60_000);
  await send(4);
  await waitFor('the parent epoch to exit', () => (run.supervisorPids().includes(parent!) ? undefined : true), 30_000);
  // Both epochs' counts are in the shared counter, which each of them sends as it goes.
  assert.equal((await statsOf(admin1)).get('cluster.backend.upstream_rq_total'), 7);
  await waitFor("the child's increases", () => (sent() >= 7 ? true : undefined));
  await sleep(3 * FLUSH_MS);
  assert.equal(sent(), 7);
  assert.equal(tcp.connections, 2, 'a connection of each epoch');
});
