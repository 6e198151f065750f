// A supervisor killed with SIGKILL under --disable-hot-restart cannot remove its stats region:
// the next proxy to start removes it, and says so.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { test, type TestContext } from 'node:test';
import * as addon from '../../src/native/addon';
import { lockRegion, privateRegionName } from '../../src/shared_memory/private_regions';
import { startUpstream } from '../helpers/http_peers';
import { startProxy, waitFor } from '../helpers/proxy_process';
import { routedBootstrap } from '../helpers/routed_bootstrap';

function regionObjects(pid: number): string[] {
  return fs.readdirSync('/dev/shm').filter((entry) => entry === `proxy_private_stats_${pid}` || entry.startsWith(`proxy_private_stats_${pid}.`)).sort();
}

/**
 * Crashes a proxy, starts the next; the crashed one's pid, its region's objects and the next
 * proxy's stderr. Every proxy that starts reclaims dead owners' regions, so one that a test
 * running in parallel starts between the lock's release and the next proxy's scan may still
 * take this region first.
 */
async function crashThenStart(t: TestContext, upstreamPort: number): Promise<{ pid: number; left: string[]; stderr: string; nextPid: number }> {
  const crashed = await startProxy(routedBootstrap(upstreamPort), ['--concurrency', '2']);
  t.after(() => crashed.cleanup());
  const left = regionObjects(crashed.pid);
  assert.ok(left.includes(`proxy_private_stats_${crashed.pid}`), left.join(' '));
  process.kill(crashed.pid, 'SIGKILL');
  await crashed.exited;
  // Held as its owner held it, the region looks alive to every proxy that starts meanwhile.
  const lock = lockRegion(privateRegionName(crashed.pid), true);
  try {
    // Its workers see the supervisor gone and leave; the region stays.
    await waitFor('the orphaned workers to leave', () => (crashed.groupPids().length === 0 ? true : undefined));
    assert.deepEqual(regionObjects(crashed.pid), left);
  } finally {
    addon.unlockFile(lock);
  }

  const next = await startProxy(routedBootstrap(upstreamPort));
  t.after(() => next.cleanup());
  assert.deepEqual(regionObjects(crashed.pid), []);
  assert.ok(regionObjects(next.pid).length > 0, 'the new proxy has its own region');
  return { pid: crashed.pid, left, stderr: next.stderr, nextPid: next.pid };
}

test('the next start reclaims the region of a supervisor killed with SIGKILL', { timeout: 60_000 }, async (t) => {
  const upstream = await startUpstream('backend');
  t.after(() => upstream.close());
  // A parallel test's proxy taking the region first is rare: a few tries make it vanishingly so.
  for (let attempt = 1; ; attempt++) {
    const { pid, left, stderr } = await crashThenStart(t, upstream.port);
    const line = new RegExp(`reclaimed the stats shared memory of proxy process ${pid}, which is gone: ${left.map((o) => `/${o.replaceAll('.', '\\.')}`).join(' ')}\\n`);
    if (line.test(stderr) || attempt === 5) {
      assert.match(stderr, line);
      return;
    }
  }
});
