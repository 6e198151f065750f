// A worker out of descriptors: each failed accept() is counted in
// listener.<address>.downstream_accept_error and logged (at most once a second, with the
// errno); the connections wait in the backlog and are served once descriptors are free again.
// libuv, which net.Server accepts through, closes them unreported instead.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { test } from 'node:test';
import { startServing, stopServing } from '../helpers/cli_runs';
import { startUpstream } from '../helpers/http_peers';
import { makeTempDir, request, waitFor } from '../helpers/proxy_process';
import { routedBootstrap } from '../helpers/routed_bootstrap';

/** Room for a worker's own descriptors and a few dozen connections. */
const NOFILE = 64;
const CONNECTIONS = 200;

function connect(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => resolve(socket));
    socket.on('error', reject);
  });
}

test(`with RLIMIT_NOFILE ${NOFILE}, connections beyond it are counted and logged, and served once they fit`, { timeout: 60_000 }, async (t) => {
  const upstream = await startUpstream('backend');
  t.after(() => upstream.close());
  const dir = makeTempDir();
  fs.writeFileSync(path.join(dir, 'bootstrap.json'), JSON.stringify(routedBootstrap(upstream.port, {
    access_log_path: '/dev/null',
    address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
  })));
  const proxy = await startServing(['-c', path.join(dir, 'bootstrap.json'), '--disable-hot-restart', '--concurrency', '1'], {
    dir,
    wrapper: ['prlimit', `--nofile=${NOFILE}:${NOFILE}`],
  });
  t.after(() => stopServing(proxy));
  const listeners = (await proxy.get('/listeners')).trim();
  const port = Number(listeners.slice(listeners.lastIndexOf(':') + 1));
  const stat = `listener.127.0.0.1_${port}.downstream_accept_error`;
  assert.equal(await proxy.stat(stat), 0, 'registered with the other listener stats');

  // Idle connections: each holds a descriptor of the worker until it closes.
  const held = await Promise.all(Array.from({ length: CONNECTIONS }, () => connect(port)));
  t.after(() => held.forEach((socket) => socket.destroy()));
  const failures = await waitFor('accept errors to be counted', async () => {
    const value = await proxy.stat(stat);
    return value !== undefined && value > 0 ? value : undefined;
  });
  await waitFor('the log line', () => (/listener 'http_in' \(127\.0\.0\.1:\d+\): accept\(\) failed: .* \(EMFILE\)/.test(proxy.stderr) ? true : undefined));
  // Still waiting, not closed: none of them has seen its connection end.
  assert.ok(held.every((socket) => !socket.destroyed && socket.readyState === 'open'));

  for (const socket of held) socket.destroy();
  await waitFor('a request to be served again', async () => ((await request(`http://127.0.0.1:${port}/after`)).status === 200 ? true : undefined));
  const lines = proxy.stderr.match(/accept\(\) failed/g)?.length ?? 0;
  assert.ok(lines >= 1 && lines <= failures, `${lines} log lines for ${failures} failures`);
});
