// The real proxy binary for the fuzzers that need a live worker (HTTP/2 frames, admin
// requests): one listener routing to a local upstream, one worker. Healthy means the worker
// never restarted, nothing was logged as a failure, and requests over HTTP/1.1 and h2c still
// get the upstream's answer.

import * as http from 'node:http';
import * as http2 from 'node:http2';
import * as net from 'node:net';
import { closeServer, listen } from '../helpers/http_peers';
import { type RunningProxy, startProxy } from '../helpers/proxy_process';
import { routedBootstrap } from '../helpers/routed_bootstrap';

/** Lines the proxy logs when it caught what should never happen (an admin handler's exception). */
const FAILURE_LOG = /admin handler .* failed|admin response to .* failed|uncaught|unhandled/i;

export interface LiveProxy {
  readonly proxy: RunningProxy;
  readonly listenerPort: number;
  readonly adminPort: number;
  checkHealth(): Promise<void>;
  close(): Promise<void>;
}

export async function startLiveProxy(): Promise<LiveProxy> {
  const upstream = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end('upstream'));
  });
  await listen(upstream);
  let proxy: RunningProxy;
  try {
    proxy = await startProxy(routedBootstrap((upstream.address() as net.AddressInfo).port));
  } catch (e) {
    await closeServer(upstream);
    throw e;
  }
  const listenerPort = await proxy.listenerPort('http_in');
  // Each restart is reported once, at the first check after it.
  let restarts = 0;
  return {
    proxy,
    listenerPort,
    adminPort: Number(new URL(proxy.adminUrl).port),
    async checkHealth() {
      if (proxy.child.exitCode !== null || proxy.child.signalCode !== null) throw new Error(`the proxy exited: ${proxy.stderr.slice(-2000)}`);
      const log = proxy.stderr;
      // The log is searched once: what was read is dropped.
      proxy.stderr = '';
      const now = (await proxy.stat('server.worker_restarts')) ?? 0;
      if (now !== restarts) {
        restarts = now;
        throw new Error(`server.worker_restarts went up to ${now}: ${log.slice(-2000)}`);
      }
      // A gauge below zero counted something's end twice.
      const stats = JSON.parse((await proxy.admin('/stats?format=json')).body) as { stats: { name?: string; value?: number }[] };
      const negative = stats.stats.filter((s) => s.value !== undefined && s.value < 0).map((s) => `${s.name} = ${s.value}`);
      if (negative.length > 0) throw new Error(`gauges below zero: ${negative.join(', ')}`);
      const failure = FAILURE_LOG.exec(log);
      if (failure) throw new Error(`the proxy logged a failure: ${log.slice(failure.index, failure.index + 2000)}`);
      const h1 = await new Promise<string>((resolve, reject) => {
        http.get({ host: '127.0.0.1', port: listenerPort, path: '/health', agent: false, timeout: 5000 }, (res) => {
          res.setEncoding('utf8');
          let body = '';
          res.on('data', (c: string) => (body += c));
          res.on('end', () => resolve(body));
        }).on('error', reject).on('timeout', () => reject(new Error('HTTP/1.1 request timed out')));
      });
      if (h1 !== 'upstream') throw new Error(`HTTP/1.1 request answered ${JSON.stringify(h1)}`);
      const session = http2.connect(`http://127.0.0.1:${listenerPort}`);
      try {
        const h2 = await new Promise<string>((resolve, reject) => {
          const stream = session.request({ ':path': '/health' });
          stream.setEncoding('utf8');
          let body = '';
          stream.on('data', (c: string) => (body += c));
          stream.on('end', () => resolve(body));
          stream.on('error', reject);
          session.on('error', reject);
          stream.setTimeout(5000, () => reject(new Error('h2c request timed out')));
        });
        if (h2 !== 'upstream') throw new Error(`h2c request answered ${JSON.stringify(h2)}`);
      } finally {
        session.destroy();
      }
    },
    async close() {
      await proxy.cleanup();
      await closeServer(upstream);
    },
  };
}

/** How many loopback source addresses the fuzzers' connections take turns with. */
const SOURCE_ADDRESSES = 200;

/**
 * Connections to `port` from 127.0.0.2 onwards in turn: 100,000 connections a minute from one
 * address would run out of ephemeral ports (each closed one waits a minute in TIME_WAIT).
 */
export function loopbackConnector(port: number): () => net.Socket {
  let n = 0;
  return () => net.connect({ port, host: '127.0.0.1', localAddress: `127.0.0.${2 + (n++ % SOURCE_ADDRESSES)}` });
}

/**
 * Writes `bytes` on a new connection, half-closes, and waits for the peer's close, at most
 * `waitMs`; resolves to whether the peer closed (rather than the wait running out).
 * @throws when the connection cannot be made: the input was never tried
 */
export function exchange(connect: () => net.Socket, bytes: Buffer, waitMs: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const socket = connect();
    let closedByPeer = true;
    let connected = false;
    const timer = setTimeout(() => {
      closedByPeer = false;
      socket.destroy();
    }, waitMs);
    socket.on('connect', () => {
      connected = true;
      socket.end(bytes);
    });
    socket.on('data', () => {});
    socket.on('error', (error) => {
      if (!connected) reject(new Error(`could not connect: ${error.message}`));
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(closedByPeer);
    });
  });
}
