import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NameTable } from '../../src/stats/name_table';
import { readStats } from '../../src/stats/reader';
import { StatsRegion, RegionMismatchError, StillInitializingError } from '../../src/stats/region';
import { ColumnState } from '../../src/stats/region_layout';
import { reclaimColumns } from '../../src/stats/column_reclaim';
import { SharedStatsStore, createHeapStatsStore, zeroColumnGauges } from '../../src/stats/store';
import { renderStatsJson, renderStatsText, StatsQuery } from '../../src/stats/render';
import { scalarSnapshot } from '../../src/server/supervisor';

const params = { maxStats: 1024, maxColumns: 4, nameBytes: 64 };

function twoWriters() {
  const buffer = new ArrayBuffer(StatsRegion.bytesFor(params));
  const region = StatsRegion.initialize(buffer, params, 0, 1000);
  const a = new SharedStatsStore(region, region.claimColumn(0, 1));
  const b = new SharedStatsStore(StatsRegion.attach(buffer, params), region.claimColumn(0, 2));
  return { region, a, b };
}

test('counters and gauges sum over the columns of every writer', () => {
  const { region, a, b } = twoWriters();
  a.counter('cluster.x.upstream_rq_total').add(3);
  b.counter('cluster.x.upstream_rq_total').inc();
  a.gauge('cluster.x.upstream_cx_active').inc();
  b.gauge('cluster.x.upstream_cx_active').add(2);
  b.gauge('cluster.x.upstream_cx_active').dec();
  assert.equal(a.counter('cluster.x.upstream_rq_total').value(), 4);
  assert.equal(b.gauge('cluster.x.upstream_cx_active').value(), 2);
  const names = readStats(region, new NameTable(region)).map((s) => s.name);
  assert.deepEqual(names.sort(), ['cluster.x.upstream_cx_active', 'cluster.x.upstream_rq_total']);
});

test('scopes prefix names and handles are reused', () => {
  const store = createHeapStatsStore();
  const scope = store.scope('http').scope('ingress');
  scope.counter('downstream_rq_total').inc();
  assert.equal(store.counter('http.ingress.downstream_rq_total').value(), 1);
  assert.equal(store.counter('a'), store.counter('a'));
});

test('never_import gauges report only the current epoch', () => {
  const buffer = new ArrayBuffer(StatsRegion.bytesFor(params));
  const region = StatsRegion.initialize(buffer, params, 0, 1000);
  const old = new SharedStatsStore(region, region.claimColumn(0, 1));
  const next = new SharedStatsStore(region, region.claimColumn(1, 2));
  old.gauge('server.live', 'never_import').set(1);
  old.gauge('server.total_connections').set(5);
  region.currentEpoch = 1;
  next.gauge('server.live', 'never_import').set(1);
  next.gauge('server.total_connections').set(2);
  assert.equal(next.gauge('server.live', 'never_import').value(), 1);
  assert.equal(next.gauge('server.total_connections').value(), 7);
});

test('a dead writer keeps its counters but loses its gauges', () => {
  const { region, a, b } = twoWriters();
  b.counter('c').add(5);
  b.gauge('g').add(3);
  a.gauge('g').inc();
  zeroColumnGauges(region, a.names, b.column);
  assert.equal(a.counter('c').value(), 5);
  assert.equal(a.gauge('g').value(), 1);
});

test('hidden per-host stats are not listed by /stats, usedonly and filter select', () => {
  const store = createHeapStatsStore();
  store.hostStats('backend', '127.0.0.1:80').rq_total.inc();
  store.counter('z.used').inc();
  store.counter('a.unused');
  store.gauge('m.gauge').set(0);
  const snapshot = scalarSnapshot(readStats(store.region, store.names));
  const text = (q: StatsQuery) => [...renderStatsText(snapshot, q)].join('');
  assert.equal(text({ usedOnly: false, filter: null }), 'a.unused: 0\nm.gauge: 0\nz.used: 1\n');
  assert.equal(text({ usedOnly: true, filter: null }), 'm.gauge: 0\nz.used: 1\n');
  const json = renderStatsJson(snapshot, { usedOnly: false, filter: { search: (name) => name.startsWith('z.') } });
  assert.equal([...json].join(''), '{"stats":[{"name":"z.used","value":1}]}');
});

test('a region of another layout is refused with a clear message', () => {
  const buffer = new ArrayBuffer(StatsRegion.bytesFor(params));
  StatsRegion.initialize(buffer, params, 0, 1000);
  assert.throws(() => StatsRegion.attach(buffer, { ...params, nameBytes: 32 }), (e: unknown) => {
    assert.ok(e instanceof RegionMismatchError);
    assert.match(e.message, /not hot-restart compatible/);
    return true;
  });
});

test('names longer than the slot are rejected, the table fills up cleanly', () => {
  const store = createHeapStatsStore({ maxStats: 8, maxColumns: 1, nameBytes: 16 });
  assert.throws(() => store.counter('x'.repeat(17)), /1\.\.16 bytes/);
  for (let i = 0; i < 8; i++) store.counter(`n${i}`);
  assert.throws(() => store.counter('one.more'), /region is full/);
});

test('retired columns fold into the current supervisor: counters kept, column freed', () => {
  const buffer = new ArrayBuffer(StatsRegion.bytesFor(params));
  const region = StatsRegion.initialize(buffer, params, 0, 1000);
  const old = new SharedStatsStore(region, region.claimColumn(0, process.pid));
  old.counter('c').add(7);
  old.gauge('g').add(2);
  const next = new SharedStatsStore(region, region.claimColumn(1, process.pid));
  region.currentEpoch = 1;
  next.counter('c').add(1);
  zeroColumnGauges(region, old.names, old.column);
  region.retireColumn(old.column);
  assert.equal(reclaimColumns(region, next.names, next.column, 1), 1);
  assert.equal(next.counter('c').value(), 8);
  assert.equal(next.gauge('g').value(), 0);
  assert.equal(region.columnState(old.column), ColumnState.Free);
  // The freed column is handed out again, empty.
  assert.equal(region.claimColumn(2, process.pid), old.column);
  assert.equal(next.counter('c').value(), 8);
});

test('a live column whose owner process is gone is retired and folded', () => {
  const buffer = new ArrayBuffer(StatsRegion.bytesFor(params));
  const region = StatsRegion.initialize(buffer, params, 0, 1000);
  const deadPid = 2 ** 22 + 12345; // above pid_max on this kernel: never a live process
  const crashed = new SharedStatsStore(region, region.claimColumn(0, deadPid));
  crashed.counter('c').add(3);
  crashed.gauge('server.total_connections').add(4);
  const next = new SharedStatsStore(region, region.claimColumn(1, process.pid));
  region.currentEpoch = 1;
  reclaimColumns(region, next.names, next.column, 1);
  assert.equal(next.counter('c').value(), 3);
  assert.equal(next.gauge('server.total_connections').value(), 0);
});

test('one epoch initializes at a time; a mark left by a dead process is taken over', () => {
  const region = StatsRegion.initialize(new ArrayBuffer(StatsRegion.bytesFor(params)), params, 0, 1000);
  region.beginInitializing(process.pid);
  assert.throws(() => region.beginInitializing(process.ppid), StillInitializingError);
  region.endInitializing(process.pid);
  region.beginInitializing(2 ** 22 + 12345);
  region.beginInitializing(process.pid);
  region.endInitializing(process.pid);
});
