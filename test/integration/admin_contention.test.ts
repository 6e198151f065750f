import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { attachRegion } from '../../src/shared_memory/posix_shared_memory';
import { HeaderField } from '../../src/shared_memory/region_layout';
import type { StatsRegion } from '../../src/shared_memory/region';
import { request, RunningProxy, sleep, startProxy, waitFor } from '../helpers/proxy_process';
import { startUpstream, Upstream } from '../helpers/http_peers';
import { routedBootstrap } from '../helpers/routed_bootstrap';

interface MutexStatsJson {
  readonly num_contentions: string;
  readonly current_wait_cycles: string;
  readonly lifetime_wait_cycles: string;
}

/**
 * Holds the region's grow lock as another process would while adding a segment, with the
 * newest segment full: the next process to allocate a block must wait for it.
 */
function holdGrowLock(region: StatsRegion): () => void {
  for (;;) {
    const { used, reserved } = region.segments.usage();
    const count = region.segments.count;
    // Older segments are full (a new one is added only when the newest has no room).
    region.segments.alloc(reserved - used);
    assert.equal(Atomics.compareExchange(region.header, HeaderField.GrowLock, 0, process.pid), 0);
    const after = region.segments.usage();
    if (region.segments.count === count && after.reserved === after.used) break;
    // Someone allocated or grew meanwhile: let go and fill the newest segment again.
    Atomics.store(region.header, HeaderField.GrowLock, 0);
  }
  let held = true;
  return () => {
    if (held) Atomics.compareExchange(region.header, HeaderField.GrowLock, process.pid, 0);
    held = false;
  };
}

describe('GET /contention with --enable-mutex-tracing', { timeout: 60_000 }, () => {
  let upstream: Upstream;
  let proxy: RunningProxy;

  before(async () => {
    // A status no request has had yet: the worker interns a new counter name for it.
    upstream = await startUpstream('backend', (_req, res) => res.writeHead(418).end());
    proxy = await startProxy(routedBootstrap(upstream.port), ['--enable-mutex-tracing']);
  });

  after(async () => {
    await proxy?.cleanup();
    await upstream?.close();
  });

  const contention = async () => JSON.parse((await proxy.admin('/contention')).body) as MutexStatsJson;

  test("counts a worker's wait on the stats region's lock", async () => {
    assert.deepEqual(await contention(), { num_contentions: '0', current_wait_cycles: '0', lifetime_wait_cycles: '0' });
    const port = await proxy.listenerPort('http_in');
    const region = attachRegion(`/proxy_private_stats_${proxy.pid}`);
    const release = holdGrowLock(region);
    try {
      let answered = false;
      const response = request(`http://127.0.0.1:${port}/teapot`).finally(() => (answered = true));
      await sleep(500);
      // The worker is spinning on the lock, its counter for 418 not yet made.
      assert.equal(answered, false);
      release();
      assert.equal((await response).status, 418);
    } finally {
      release();
    }
    const stats = await waitFor('the worker\'s report', async () => {
      const s = await contention();
      return s.num_contentions === '0' ? undefined : s;
    }, 5000);
    assert.equal(stats.num_contentions, '1');
    assert.ok(Number(stats.current_wait_cycles) > 0);
    assert.equal(stats.lifetime_wait_cycles, stats.current_wait_cycles);
  });
});
