// Run inside a private network namespace (`unshare -rn --fork node <this> <proxy bin>`) by
// original_dst_netns.test.ts: iptables REDIRECTs the client's connections to 127.0.0.2:80 and
// 127.0.0.3:90 to the proxy's listeners (HTTP on 8080, tcp_proxy on 8081, each with the
// original_dst listener filter); the ORIGINAL_DST cluster sends them on to upstreams that really
// listen at those addresses. Only connections from 127.0.0.5 (the client) are redirected, so the
// proxy's own upstream connections are not. Nothing else lives in the namespace: fixed ports are
// safe. Prints one JSON line with what it saw, then stops everything it started.

import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { httpListener, type Json, tcpProxyListener } from './config_fixtures';
import { reclaimKilledProxyRegion } from './proxy_process';

const CLIENT = '127.0.0.5';
const HTTP_DESTINATION = { address: '127.0.0.2', port: 80 };
const TCP_DESTINATION = { address: '127.0.0.3', port: 90 };
const ADMIN = 'http://127.0.0.1:9901';

function get(url: string, headers: http.OutgoingHttpHeaders = {}, localAddress?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers: { connection: 'close', ...headers }, agent: false, localAddress }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
  });
}

async function poll<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch {
      // Not up yet.
    }
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The addresses /clusters lists as hosts of cluster dst. */
async function dstHosts(): Promise<string[]> {
  const body = (await get(`${ADMIN}/clusters`)).body;
  return [...new Set(body.split('\n').filter((l) => l.startsWith('dst::') && l.includes('::cx_total::')).map((l) => l.split('::')[1]!))].sort();
}

function echoOnce(socket: net.Socket, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    socket.once('data', (data: Buffer) => resolve(data.toString()));
    socket.once('error', reject);
    socket.write(text);
  });
}

/** `listener` with the original_dst listener filter. */
function redirected(listener: Json): Json {
  return { ...listener, listener_filters: [{ name: 'envoy.filters.listener.original_dst' }] };
}

async function main(): Promise<void> {
  const proxyBin = process.argv[2]!;
  execFileSync('ip', ['link', 'set', 'lo', 'up']);
  for (const [destination, to] of [[HTTP_DESTINATION, 8080], [TCP_DESTINATION, 8081]] as const) {
    execFileSync('iptables', ['-t', 'nat', '-A', 'OUTPUT', '-p', 'tcp', '-s', CLIENT, '-d', destination.address, '--dport', String(destination.port), '-j', 'REDIRECT', '--to-ports', String(to)]);
  }
  const httpUpstream = http.createServer((req, res) => res.end(`upstream saw ${req.headers.host}`));
  const tcpUpstream = net.createServer((socket) => socket.on('data', (d) => socket.write(d)).on('error', () => undefined));
  await new Promise<void>((resolve) => httpUpstream.listen(HTTP_DESTINATION.port, HTTP_DESTINATION.address, resolve));
  await new Promise<void>((resolve) => tcpUpstream.listen(TCP_DESTINATION.port, TCP_DESTINATION.address, resolve));

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-origdst-'));
  const config = {
    admin: { access_log_path: '/dev/null', address: { socket_address: { address: '127.0.0.1', port_value: 9901 } } },
    static_resources: {
      listeners: [
        redirected(httpListener('http', 8080, [{ match: { prefix: '/' }, route: { cluster: 'dst' } }])),
        redirected(tcpProxyListener('tcp', 8081, 'dst')),
      ],
      clusters: [{ name: 'dst', type: 'ORIGINAL_DST', lb_policy: 'CLUSTER_PROVIDED', connect_timeout: '1s', cleanup_interval: '3s' }],
    },
  };
  fs.writeFileSync(path.join(dir, 'bootstrap.json'), JSON.stringify(config));
  const proxy = spawn(proxyBin, ['-c', path.join(dir, 'bootstrap.json'), '--concurrency', '2', '--disable-hot-restart'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  proxy.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const result: Record<string, unknown> = {};
  let tcp: net.Socket | null = null;
  try {
    await poll('/ready', async () => ((await get(`${ADMIN}/ready`)).status === 200 ? true : undefined));
    const bodies: string[] = [];
    // connection: close, so that both workers take some.
    for (let i = 0; i < 8; i++) bodies.push((await get(`http://${HTTP_DESTINATION.address}:${HTTP_DESTINATION.port}/`, {}, CLIENT)).body);
    result['httpBodies'] = [...new Set(bodies)];
    tcp = net.connect({ host: TCP_DESTINATION.address, port: TCP_DESTINATION.port, localAddress: CLIENT });
    result['tcpFirst'] = await echoOnce(tcp, 'ping');
    result['hostsAfterTraffic'] = await poll('both hosts', async () => {
      const hosts = await dstHosts();
      return hosts.length === 2 ? hosts : undefined;
    });
    result['hostsAfterCleanup'] = await poll('both hosts removed', async () => ((await dstHosts()).length === 0 ? [] : undefined));
    // The tcp_proxy connection opened before the cleanup carries on.
    result['tcpAfterCleanup'] = await echoOnce(tcp, 'pong');
    const stats = JSON.parse((await get(`${ADMIN}/stats?format=json`)).body) as { stats: { name: string; value: number }[] };
    const stat = (name: string) => stats.stats.find((s) => s.name === name)?.value;
    result['upstreamCxTotal'] = stat('cluster.dst.upstream_cx_total');
    result['membershipChange'] = stat('cluster.dst.membership_change');
  } catch (error) {
    result['error'] = `${(error as Error).message}\nproxy stderr:\n${stderr}`;
  } finally {
    tcp?.destroy();
    proxy.kill('SIGTERM');
    if (proxy.exitCode === null && proxy.signalCode === null) {
      const exited = new Promise((resolve) => proxy.once('exit', resolve));
      const timer = setTimeout(() => proxy.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    // Killed, it could not remove its stats region.
    if (proxy.pid !== undefined) reclaimKilledProxyRegion(proxy.pid);
    httpUpstream.close();
    tcpUpstream.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}

main().catch((error: Error) => {
  process.stdout.write(`${JSON.stringify({ error: error.message })}\n`);
  process.exit(1);
});
