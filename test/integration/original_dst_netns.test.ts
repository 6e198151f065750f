// ORIGINAL_DST with real redirected connections: in a private network namespace (unshare -rn),
// iptables REDIRECT sends a client's connections to the proxy, whose original_dst listener
// filter restores their destination; the ORIGINAL_DST cluster connects there, for HTTP through
// the connection manager and for raw TCP through tcp_proxy, with two workers. The hosts leave
// after a cleanup_interval unused while the tcp_proxy connection opened before keeps working.
// The scenario runs whole inside the namespace (test/helpers/original_dst_netns_scenario.ts).

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { test } from 'node:test';
import { PROXY_BIN } from '../helpers/proxy_process';

const SCENARIO = path.join(__dirname, '..', 'helpers', 'original_dst_netns_scenario.js');
const LIMIT_MS = 90_000;

/** Why the namespace cannot be made here, or null when it can. */
function unavailable(): string | null {
  const probe = spawnSync('unshare', ['-rn', 'sh', '-c', 'iptables -t nat -L OUTPUT -n'], { encoding: 'utf8', timeout: 10_000 });
  if (probe.error !== undefined) return `unshare is not available: ${probe.error.message}`;
  if (probe.status !== 0) return `unshare -rn with iptables failed (user namespaces or Debian's iptables missing; scripts/install-test-deps.sh installs it): ${probe.stderr.trim()}`;
  return null;
}

const skip = unavailable();

test('redirected HTTP and TCP connections reach their original destination; hosts leave after cleanup_interval, connections stay', { timeout: LIMIT_MS + 10_000, skip: skip ?? false }, async () => {
  // Its own process group, so that everything in the namespace goes if the scenario overruns.
  const child = spawn('unshare', ['-rn', '--fork', process.execPath, SCENARIO, PROXY_BIN], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const overrun = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), LIMIT_MS);
  try {
    await new Promise((resolve) => child.once('close', resolve));
  } finally {
    clearTimeout(overrun);
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  const lines = stdout.trim().split('\n');
  const result = JSON.parse(lines[lines.length - 1] || '{}') as Record<string, unknown>;
  assert.equal(result['error'], undefined, `${String(result['error'])}\n${stderr}`);
  assert.deepEqual(result['httpBodies'], ['upstream saw 127.0.0.2']);
  assert.equal(result['tcpFirst'], 'ping');
  assert.deepEqual(result['hostsAfterTraffic'], ['127.0.0.2:80', '127.0.0.3:90']);
  assert.deepEqual(result['hostsAfterCleanup'], []);
  assert.equal(result['tcpAfterCleanup'], 'pong');
  // One HTTP connection per worker at most (keep-alive pools), and the tcp_proxy one.
  assert.ok(Number(result['upstreamCxTotal']) >= 2 && Number(result['upstreamCxTotal']) <= 3, String(result['upstreamCxTotal']));
});
