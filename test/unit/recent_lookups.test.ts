import assert from 'node:assert/strict';
import { test } from 'node:test';
import { renderRecentLookups } from '../../src/admin/recent_lookups_handler';
import { RecentLookups } from '../../src/stats/recent_lookups';
import { StatKind } from '../../src/shared_memory/region_layout';
import { createHeapStatsStore } from '../../src/stats/store';

test('disabled: only the total counts', () => {
  const lookups = new RecentLookups();
  lookups.lookup('a');
  lookups.lookupAll(3, () => assert.fail('no names are listed while disabled'));
  assert.deepEqual(lookups.snapshot(), { names: [], total: 4 });
});

test('enabled: the most recent names, each with its count; the least recent goes first when full', () => {
  const lookups = new RecentLookups();
  lookups.setCapacity(3);
  for (const name of ['a', 'b', 'a', 'c', 'd']) lookups.lookup(name);
  // b was looked up least recently when d came.
  assert.deepEqual(lookups.snapshot(), { names: [['a', 2], ['c', 1], ['d', 1]], total: 5 });
  lookups.lookupAll(2, () => ['c', 'e']);
  assert.deepEqual(lookups.snapshot(), { names: [['d', 1], ['c', 2], ['e', 1]], total: 7 });
  lookups.setCapacity(1);
  assert.deepEqual(lookups.snapshot().names, [['e', 1]]);
  lookups.clear();
  assert.deepEqual(lookups.snapshot(), { names: [], total: 0 });
  lookups.setCapacity(0);
  lookups.lookup('f');
  assert.deepEqual(lookups.snapshot(), { names: [], total: 1 });
});

test('the store counts every lookup by name, cached handle or not, and publishes its total', () => {
  const store = createHeapStatsStore();
  const gauge = store.gauge('server.stats_recent_lookups', 'never_import');
  store.recentLookups.setCapacity(100);
  store.publishLookupTotal(gauge);
  store.counter('x.a').inc();
  store.counter('x.a').inc();
  store.scope('x').histogram('h', 'milliseconds');
  store.declareAll('cluster.c.', [{ scope: 'ssl.', names: ['handshake'], kind: StatKind.Counter, flags: 0 }]);
  assert.deepEqual(store.recentLookups.snapshot(), {
    names: [['x.a', 2], ['x.h', 1], ['cluster.c.ssl.handshake', 1]],
    total: 5,
  });
  assert.equal(gauge.value(), 5);
  store.clearRecentLookups();
  assert.equal(gauge.value(), 0);
});

test('rendered as Envoy does: summed over processes, by count then name, and the total', () => {
  const processes = [
    { names: [['b', 2], ['a', 1]] as [string, number][], total: 10 },
    { names: [['b', 1], ['c', 3], ['a', 2]] as [string, number][], total: 5 },
  ];
  assert.equal(renderRecentLookups(processes, true), '   Count Lookup\n       3 a\n       3 b\n       3 c\n\ntotal: 15\n');
  assert.equal(renderRecentLookups([{ names: [], total: 7 }], true), '   Count Lookup\n\ntotal: 7\n');
  assert.equal(renderRecentLookups([{ names: [], total: 7 }], false), 'Lookup tracking is not enabled. Use /stats/recentlookups/enable to enable.\n\ntotal: 7\n');
});
