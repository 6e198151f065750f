// A worker's OverloadManager with monitors whose readings the test hands out: triggers turn
// actions on at their threshold and off below it, a reading still pending skips the refresh, a
// failed one keeps the last pressure, and the supervisor hears only of changes.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { OverloadManagerConfig } from '../../src/config/model';
import { OverloadManager, type OverloadReport } from '../../src/overload/overload_manager';
import { OverloadState } from '../../src/overload/overload_state';
import type { ResourceMonitor } from '../../src/overload/resource_monitor';
import { createHeapStatsStore } from '../../src/stats/store';
import { silentLogger } from '../helpers/data_plane';
import { waitFor } from '../helpers/proxy_process';

/** Each read() waits for the test to answer it with a pressure or an error. */
class HandedMonitor implements ResourceMonitor {
  readonly waiting: { resolve: (p: number) => void; reject: (e: Error) => void }[] = [];
  reads = 0;

  read(): Promise<number> {
    this.reads++;
    return new Promise((resolve, reject) => this.waiting.push({ resolve, reject }));
  }

  async answer(pressure: number | Error): Promise<void> {
    const next = await waitFor('a read', () => this.waiting.shift(), 5000);
    if (pressure instanceof Error) next.reject(pressure);
    else next.resolve(pressure);
  }
}

const CONFIG: OverloadManagerConfig = {
  refreshIntervalMs: 5,
  resourceMonitors: [{ kind: 'injected_resource', name: 'proxy.resource_monitors.injected_resource', filename: '' }],
  actions: [
    { name: 'proxy.overload_actions.disable_http_keepalive', kind: 'disable_http_keepalive', triggers: [{ monitor: 0, threshold: 0.5 }] },
    { name: 'proxy.overload_actions.stop_accepting_requests', kind: 'stop_accepting_requests', triggers: [{ monitor: 0, threshold: 0.9 }] },
  ],
};

test('thresholds turn actions on and off; pending reads are skipped, failed ones counted; only changes are reported', { timeout: 20_000 }, async (t) => {
  const monitor = new HandedMonitor();
  const state = new OverloadState();
  const stats = createHeapStatsStore();
  const reports: OverloadReport[] = [];
  const accepting: boolean[] = [];
  const manager = new OverloadManager({
    config: CONFIG,
    monitors: [monitor],
    targets: { state, listeners: { setAccepting: (a) => accepting.push(a) }, heap: null },
    stats,
    log: silentLogger,
    onReport: (report) => reports.push(report),
  });
  manager.start();
  t.after(() => manager.close());
  const skipped = stats.counter('overload.proxy.resource_monitors.injected_resource.skipped_updates');
  const failed = stats.counter('overload.proxy.resource_monitors.injected_resource.failed_updates');

  // The first read is still pending while the next refreshes come: they skip it.
  await waitFor('a skipped refresh', () => (skipped.value() > 0 ? true : undefined), 5000);
  assert.equal(monitor.reads, 1);

  await monitor.answer(0.5);
  assert.deepEqual([state.disableHttpKeepalive, state.stopAcceptingRequests], [true, false]);
  await monitor.answer(0.95);
  assert.deepEqual([state.disableHttpKeepalive, state.stopAcceptingRequests], [true, true]);
  await monitor.answer(0.951);
  await monitor.answer(new Error('unreadable'));
  assert.equal(failed.value(), 1);
  assert.deepEqual([state.disableHttpKeepalive, state.stopAcceptingRequests], [true, true], 'a failure keeps the last pressure');
  await monitor.answer(0.1);
  assert.deepEqual([state.disableHttpKeepalive, state.stopAcceptingRequests], [false, false]);
  // 0.95 and 0.951 are both 95 %: one report.
  assert.deepEqual(reports, [
    { pressures: [50], active: [true, false] },
    { pressures: [95], active: [true, true] },
    { pressures: [10], active: [false, false] },
  ]);
  assert.deepEqual(accepting, [], 'no action touched the listeners');
});
