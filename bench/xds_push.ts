// One large xDS push over ADS (state of the world, V3, from the test management server) to a
// proxy with 2 workers, per row:
//
//   rds   the route configuration of the listener's `rds`, replaced by one of XDS_PUSH_ROUTES
//         (10,000) routes that the probe's path misses, then a catch-all to the upstream
//   lds   no listener at first, then XDS_PUSH_LISTENERS (1,000) listeners, each on its own
//         127.0.0.1 port with its routes inline to the upstream; the probe hits the last one
//
// Prints, without asserting: the time from the push until the proxy ACKs it, and until both
// workers serve by it (a request on a new connection, repeated, reaches the upstream from each
// worker), and the longest GET /ready took meanwhile, polled every few ms (how long the update
// held the supervisor's event loop). A row is one PushRow.
//
//   node dist/bench/xds_push.js            (part of `make bench`)

import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import type { JsonObject } from '../src/config/json';
import { socketOwner } from '../test/helpers/socket_owner';
import { XdsServer } from '../test/helpers/xds_server';
import { pollLatency } from './admin_latency';
import { freePort } from './free_port';
import { fetchOnce } from './http_probe';
import { childrenOf, until } from './proxy_probes';

const PROXY_BIN = path.resolve(__dirname, '..', '..', 'bin', 'proxy');
const START_TIMEOUT_MS = 60_000;
const PUSH_TIMEOUT_MS = 300_000;
const READY_POLL_MS = 5;
const ROUTE_TYPE = 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration';
const LISTENER_TYPE = 'type.googleapis.com/envoy.config.listener.v3.Listener';
const ADS_SOURCE = { ads: {}, resource_api_version: 'V3' };

interface Ports {
  readonly admin: number;
  readonly listen: number;
  readonly xds: number;
  readonly upstream: number;
}

interface Resources {
  readonly typeUrl: string;
  readonly resources: readonly JsonObject[];
}

/** One measured push: what the proxy starts with, what is pushed, and where a request shows it served. */
interface PushRow {
  readonly title: string;
  /** The listeners and clusters; the management server is cluster `xds`, the upstream cluster `up`. */
  readonly staticResources: (ports: Ports) => JsonObject;
  /** `dynamic_resources` besides `ads_config`. */
  readonly dynamicResources: JsonObject;
  /** Served before the proxy starts, at version 1. */
  readonly initial: (ports: Ports) => Resources;
  /** Pushed at version 2. */
  readonly push: (ports: Ports) => Resources;
  /** A request that reaches the upstream only once a worker serves by the pushed configuration. */
  readonly probe: (ports: Ports) => { readonly port: number; readonly path: string };
}

const socket = (address: string, port: number) => ({ socket_address: { address, port_value: port } });

function staticCluster(name: string, port: number, extra: JsonObject = {}): JsonObject {
  return { name, connect_timeout: '1s', load_assignment: { cluster_name: name, endpoints: [{ lb_endpoints: [{ endpoint: { address: socket('127.0.0.1', port) } }] }] }, ...extra };
}

function routeConfiguration(routes: JsonObject[]): JsonObject {
  return { '@type': ROUTE_TYPE, name: 'bench_routes', virtual_hosts: [{ name: 'all', domains: ['*'], routes }] };
}

/** A listener on 127.0.0.1:`port` whose connection manager takes its routes from `routes` (`rds` or `route_config`). */
function httpListener(name: string, port: number, routes: JsonObject): JsonObject {
  return {
    name,
    address: socket('127.0.0.1', port),
    filter_chains: [
      {
        filters: [
          {
            name: 'proxy.filters.network.http_connection_manager',
            typed_config: {
              '@type': 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
              stat_prefix: name,
              ...routes,
              http_filters: [{ name: 'proxy.filters.http.router' }],
            },
          },
        ],
      },
    ],
  };
}

function rdsRow(routes: number): PushRow {
  return {
    title: `RDS: 1 route configuration of ${routes} routes`,
    staticResources: (ports) => ({
      listeners: [httpListener('ingress_http', ports.listen, { rds: { config_source: ADS_SOURCE, route_config_name: 'bench_routes' } })],
      clusters: [staticCluster('xds', ports.xds, { http2_protocol_options: {} }), staticCluster('up', ports.upstream)],
    }),
    dynamicResources: {},
    initial: () => ({ typeUrl: ROUTE_TYPE, resources: [routeConfiguration([{ match: { prefix: '/' }, direct_response: { status: 200 } }])] }),
    push: () => {
      // Service prefixes and exact paths, as a large table has them; /probe misses them all.
      const table = Array.from({ length: routes }, (_, i): JsonObject => ({
        match: i % 2 === 0 ? { prefix: `/svc${i}/` } : { path: `/api/v1/item${i}` },
        route: { cluster: 'up' },
      }));
      return { typeUrl: ROUTE_TYPE, resources: [routeConfiguration([...table, { match: { prefix: '/' }, route: { cluster: 'up' } }])] };
    },
    probe: (ports) => ({ port: ports.listen, path: '/probe' }),
  };
}

function ldsRow(listeners: number): PushRow {
  const routes = { route_config: { name: 'inline', virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster: 'up' } }] }] } };
  return {
    title: `LDS: ${listeners} listeners, each on its own port`,
    staticResources: (ports) => ({ clusters: [staticCluster('xds', ports.xds, { http2_protocol_options: {} }), staticCluster('up', ports.upstream)] }),
    dynamicResources: { lds_config: ADS_SOURCE },
    initial: () => ({ typeUrl: LISTENER_TYPE, resources: [] }),
    // The probe's listener is the last one on a port known here; the others take ports the
    // proxy picks, since finding 1,000 free ports first would race with the machine's others.
    push: (ports) => ({
      typeUrl: LISTENER_TYPE,
      resources: Array.from({ length: listeners }, (_, i) => ({
        '@type': LISTENER_TYPE,
        ...httpListener(`l${i}`, i === listeners - 1 ? ports.listen : 0, routes),
      })),
    }),
    probe: (ports) => ({ port: ports.listen, path: '/probe' }),
  };
}

async function measure(row: PushRow): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-bench-xds-'));
  let workers: number[] = [];
  const seen = new Set<number>();
  const upstream = http.createServer((req, res) => {
    const owner = socketOwner(req.socket.remotePort!, workers);
    if (owner !== undefined) seen.add(owner);
    res.end('ok');
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
  const xds = await XdsServer.start();
  const ports: Ports = { admin: await freePort(), listen: await freePort(), xds: xds.port, upstream: (upstream.address() as { port: number }).port };
  const initial = row.initial(ports);
  xds.setResources(initial.typeUrl, '1', initial.resources);
  const config = path.join(dir, 'bootstrap.json');
  fs.writeFileSync(
    config,
    JSON.stringify({
      node: { id: 'bench', cluster: 'bench' },
      admin: { access_log_path: '/dev/null', address: socket('127.0.0.1', ports.admin) },
      dynamic_resources: { ads_config: { api_type: 'GRPC', transport_api_version: 'V3', grpc_services: [{ envoy_grpc: { cluster_name: 'xds' } }] }, ...row.dynamicResources },
      static_resources: row.staticResources(ports),
    }),
  );
  const child = spawn(process.execPath, [PROXY_BIN, '-c', config, '--disable-hot-restart', '--concurrency', '2', '-l', 'error'], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    await until('/ready', performance.now() + START_TIMEOUT_MS, async () => {
      if (child.exitCode !== null) throw new Error(`the proxy exited with ${child.exitCode}`);
      return (await fetchOnce(ports.admin, '/ready')).status === 200;
    });
    workers = childrenOf(child.pid!);
    if (workers.length !== 2) throw new Error(`expected 2 workers, found ${workers.length}`);
    const probe = row.probe(ports);
    await fetchOnce(probe.port, probe.path).catch(() => undefined);
    if (seen.size !== 0) throw new Error('before the push a request reached the upstream');

    const pushed = row.push(ports);
    const encodeStarted = performance.now();
    xds.setResources(pushed.typeUrl, '2', pushed.resources);
    // The push is encoded and handed to gRPC synchronously; the clock starts once it is sent.
    const t0 = performance.now();
    const nonce = xds.lastNonce;
    const admin = pollLatency(ports.admin, '/ready', READY_POLL_MS);
    const deadline = t0 + PUSH_TIMEOUT_MS;
    const [acked, bothWorkers] = await Promise.all([
      until('the proxy to ACK the push', deadline, async () => {
        const answer = xds.requests.find((r) => r.type_url === pushed.typeUrl && r.response_nonce === nonce);
        if (answer?.error_detail) throw new Error(`the proxy NACKed the push: ${answer.error_detail.message}`);
        return answer !== undefined;
      }),
      until('both workers to serve by the push', deadline, async () => {
        // Each request on its own connection, so that both workers take some.
        await Promise.all(Array.from({ length: 4 }, () => fetchOnce(probe.port, probe.path)));
        return workers.every((w) => seen.has(w));
      }),
    ]);
    const worstAdmin = await admin.stop();
    const ms = (t: number) => `${(t - t0).toFixed(0)} ms`;
    console.log(`  ${row.title}`);
    console.log(`    encoded and sent by the server ${(t0 - encodeStarted).toFixed(0)} ms (not counted below)`);
    console.log(`    ACKed by the proxy             ${ms(acked)}`);
    console.log(`    served by both workers         ${ms(bothWorkers)}`);
    console.log(`    worst admin GET /ready         ${worstAdmin.toFixed(0)} ms (polled every ${READY_POLL_MS} ms through the push)`);
  } finally {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
    await xds.close();
    upstream.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const rows = [rdsRow(Number(process.env.XDS_PUSH_ROUTES ?? 10_000)), ldsRow(Number(process.env.XDS_PUSH_LISTENERS ?? 1_000))];
  console.log('xds_push: one push over ADS (state of the world, V3) to a proxy with --concurrency 2');
  for (const row of rows) await measure(row);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
