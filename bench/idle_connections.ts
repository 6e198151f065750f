// `make bench`'s idle connections: 10,000 keep-alive connections to the proxy's HTTP listener, each
// served one request and then left open, with the worker's RSS read before the first, at half of
// them and with all of them. Prints how many were held and the RSS each cost against the targets
// (bench/idle_report.ts). Needs an open-files limit above 10,000 for this process and the proxy's.
//
//   node dist/bench/idle_connections.js        (part of `make bench`)

import { readFileSync } from 'node:fs';
import * as net from 'node:net';
import { join, resolve } from 'node:path';
import { formatIdleReport, IDLE_CONNECTIONS, softOpenFilesLimit } from './idle_report';
import { runMain } from './interrupt';
import { childrenOf, stat, until } from './proxy_probes';
import { startProxy, writeProxyLaunch } from './services';
import { startBenchUpstream, withSession } from './session';

const REPO_ROOT = resolve(__dirname, '..', '..');
/** Connections opened at once. */
const BATCH = 250;
/** Besides the connections: the proxy's listeners, upstream connections, admin, files. */
const SPARE_FILES = 200;
const ACTIVE_STAT = 'http.bench_http.downstream_cx_active';
const SETTLE_MS = 60_000;

async function main(): Promise<number> {
  const limit = softOpenFilesLimit(readFileSync('/proc/self/limits', 'utf8'));
  if (limit < IDLE_CONNECTIONS + SPARE_FILES) {
    process.stdout.write(
      `idle keep-alive connections: not measured: the open-files limit is ${limit}, and ${IDLE_CONNECTIONS + SPARE_FILES} are needed (ulimit -n)\n`,
    );
    return 0;
  }
  return withSession(async (session) => {
    const upstreamPort = await startBenchUpstream(session);
    const launch = await writeProxyLaunch(join(session.runDir, 'proxy'), 'proxy', 'http', upstreamPort, null);
    const proxy = await startProxy(session.processes, launch, REPO_ROOT, session.pinning?.proxyCpu ?? null);
    const [worker] = proxy.process === null ? [] : childrenOf(proxy.process.pid);
    if (worker === undefined) throw new Error('the proxy has no worker');
    const rssKiB = (): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${worker}/status`, 'utf8'))?.[1] ?? NaN);

    const sockets: net.Socket[] = [];
    let closedByProxy = 0;
    const open = (): Promise<void> =>
      new Promise<void>((done, fail) => {
        const socket = net.connect(launch.port, '127.0.0.1');
        sockets.push(socket);
        socket.once('error', fail);
        socket.once('end', () => closedByProxy++);
        socket.once('connect', () => socket.write('GET / HTTP/1.1\r\nhost: bench\r\n\r\n'));
        socket.once('data', (chunk: Buffer) => (chunk.toString('latin1').startsWith('HTTP/1.1 200') ? done() : fail(new Error(`answered ${chunk.toString('latin1').split('\r\n')[0]}`))));
      });
    try {
      const rss = [rssKiB()];
      for (let i = 0; i < IDLE_CONNECTIONS; i += BATCH) {
        if (i === IDLE_CONNECTIONS / 2) rss.push(rssKiB());
        await Promise.all(Array.from({ length: Math.min(BATCH, IDLE_CONNECTIONS - i) }, open));
      }
      // Reported as counted when the count does not settle: a shortfall is the finding, not an error.
      let active = 0;
      await until('every connection counted', performance.now() + SETTLE_MS, async () => (active = (await stat(launch.adminPort, ACTIVE_STAT)) ?? 0) === IDLE_CONNECTIONS, 100).catch(() => undefined);
      rss.push(rssKiB());
      process.stdout.write(`${formatIdleReport({ opened: IDLE_CONNECTIONS, closedByProxy, active, rssKiB: [rss[0]!, rss[1]!, rss[2]!] })}\n`);
      return 0;
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  });
}

runMain('idle connections', main);
