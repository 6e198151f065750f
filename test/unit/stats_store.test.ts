import assert from 'node:assert/strict';
import { test } from 'node:test';
import { reclaimColumns, zeroColumnGauges } from '../../src/stats/column_reclaim';
import { BUCKET_COUNT, bucketIndex } from '../../src/stats/histogram_buckets';
import { NameTable } from '../../src/stats/name_table';
import { RegionMismatchError, StatsRegion, StillInitializingError } from '../../src/shared_memory/region';
import {
  ColumnState,
  DIRECTORY_ENTRY_WORDS,
  DIRECTORY_OFFSET,
  DirectoryField,
  hotRestartVersion,
  SectionKind,
  SlotField,
  SlotFlag,
  SlotState,
  StatKind,
} from '../../src/shared_memory/region_layout';
import { renderStatsJson, renderStatsText, StatsQuery } from '../../src/admin/stats/render';
import { HeapMemory } from '../../src/shared_memory/shared_memory_source';
import { createHeapStatsStore, SharedStatsStore, STATS_OVERFLOW } from '../../src/stats/store';
import { StatsMemoryError } from '../../src/shared_memory/segments';
import { SafeRegex } from '../../src/regex/safe_regex';
import { scalarsOf } from '../helpers/histogram_samples';

const DEAD_PID = 2 ** 22 + 12345; // above pid_max on this kernel: never a live process

function region(memory = new HeapMemory(), segmentBytes = 1 << 20): StatsRegion {
  return StatsRegion.create({ memory, name: '/t', pid: process.pid, segmentBytes }, 0, 1000);
}

/** Two writers of one region, as a worker and its supervisor would be. */
function twoWriters() {
  const memory = new HeapMemory();
  const r = region(memory);
  const a = new SharedStatsStore(r, r.claimColumn(0, 1));
  const b = new SharedStatsStore(StatsRegion.attach({ memory, name: '/t', pid: process.pid }), r.claimColumn(0, 2));
  return { region: r, a, b };
}

test('counters and gauges sum over the columns of every writer', () => {
  const { a, b } = twoWriters();
  a.counter('cluster.x.upstream_rq_total').add(3);
  b.counter('cluster.x.upstream_rq_total').inc();
  a.gauge('cluster.x.upstream_cx_active').inc();
  b.gauge('cluster.x.upstream_cx_active').add(2);
  b.gauge('cluster.x.upstream_cx_active').dec();
  assert.equal(a.counter('cluster.x.upstream_rq_total').value(), 4);
  assert.equal(b.gauge('cluster.x.upstream_cx_active').value(), 2);
  assert.deepEqual(
    scalarsOf(a.reader.scalars()).map((s) => [s.name, s.kind, s.value]),
    [
      ['cluster.x.upstream_cx_active', 'gauge', 2],
      ['cluster.x.upstream_rq_total', 'counter', 4],
    ],
  );
});

test('scopes prefix names and handles are reused', () => {
  const store = createHeapStatsStore();
  const scope = store.scope('http').scope('ingress');
  scope.counter('downstream_rq_total').inc();
  assert.equal(store.counter('http.ingress.downstream_rq_total').value(), 1);
  assert.equal(store.counter('a'), store.counter('a'));
  assert.equal(scope.histogram('downstream_rq_time', 'milliseconds'), store.histogram('http.ingress.downstream_rq_time', 'milliseconds'));
});

test('the store grows past its first segment with no fixed cap, and every writer sees every name', () => {
  const memory = new HeapMemory();
  const r = region(memory, 64 << 10);
  const a = new SharedStatsStore(r, r.claimColumn(0, 1));
  const b = new SharedStatsStore(StatsRegion.attach({ memory, name: '/t', pid: process.pid }), r.claimColumn(0, 2));
  const n = 70_000; // more than the old fixed region's 65,536 names
  for (let i = 0; i < n; i++) (i % 2 === 0 ? a : b).counter(`cluster.c${i}.upstream_rq_total`).inc();
  for (let i = 0; i < n; i += 7) b.counter(`cluster.c${i}.upstream_rq_total`).inc();
  assert.ok(r.segments.count > 1, `${r.segments.count} segments`);
  const values = a.snapshot();
  assert.equal(values.size, n);
  assert.equal(values.get('cluster.c0.upstream_rq_total'), 2);
  assert.equal(values.get('cluster.c1.upstream_rq_total'), 1);
  assert.equal(values.get('cluster.c69999.upstream_rq_total'), 1);
  // What the compatibility string says does not depend on how many stats exist.
  assert.equal(hotRestartVersion(), `2.columns:1.stats:2.hosts:2`);
});

test('shared memory per stat: the slot record, the name and 8 bytes per writer that writes it', () => {
  const memory = new HeapMemory();
  const r = region(memory, 4 << 20);
  const writers = [0, 1, 2].map((i) => new SharedStatsStore(r, r.claimColumn(0, i + 1)));
  const before = r.segments.usage().used;
  const n = 40_960;
  for (let i = 0; i < n; i++) for (const w of writers) w.counter(`cluster.c${i}.x`).inc();
  const perStat = (r.segments.usage().used - before) / n;
  const nameBytes = 'cluster.c12345.x'.length;
  // 48-byte record + name (8-byte aligned) + 3 writers x 8 bytes, plus chunk headers.
  assert.ok(perStat < 48 + 24 + 3 * 8 + 4, `${perStat} bytes per stat`);
  assert.ok(perStat - nameBytes < 64 * 3, 'under 64 bytes per stat per writer plus the name');
});

test('names outside 1..4096 bytes are refused', () => {
  const store = createHeapStatsStore();
  assert.throws(() => store.counter('x'.repeat(4097)), /1\.\.4096 bytes/);
  assert.throws(() => store.counter(''), /1\.\.4096 bytes/);
});

test('never_import gauges report only the current epoch', () => {
  const r = region();
  const old = new SharedStatsStore(r, r.claimColumn(0, 1));
  const next = new SharedStatsStore(r, r.claimColumn(1, 2));
  old.gauge('server.live', 'never_import').set(1);
  old.gauge('server.total_connections').set(5);
  r.currentEpoch = 1;
  next.gauge('server.live', 'never_import').set(1);
  next.gauge('server.total_connections').set(2);
  assert.equal(next.gauge('server.live', 'never_import').value(), 1);
  assert.equal(next.gauge('server.total_connections').value(), 7);
});

test('a dead writer keeps its counters but loses its gauges', () => {
  const { region: r, a, b } = twoWriters();
  b.counter('c').add(5);
  b.gauge('g').add(3);
  a.gauge('g').inc();
  zeroColumnGauges(r, a.names, a.hosts, b.column);
  assert.equal(a.counter('c').value(), 5);
  assert.equal(a.gauge('g').value(), 1);
});

test('usedonly and filter select among counters and gauges, in name order', () => {
  const store = createHeapStatsStore();
  store.counter('z.used').inc();
  store.counter('a.unused');
  store.gauge('m.gauge').set(0);
  const snapshot = { scalars: store.reader.scalars(), histograms: [] };
  const text = (q: StatsQuery) => [...renderStatsText(snapshot, q)].join('');
  assert.equal(text({ usedOnly: false, filter: null }), 'a.unused: 0\nm.gauge: 0\nz.used: 1\n');
  assert.equal(text({ usedOnly: true, filter: null }), 'm.gauge: 0\nz.used: 1\n');
  const json = renderStatsJson(snapshot, { usedOnly: false, filter: SafeRegex.compile('^z\\.') });
  assert.equal([...json].join(''), '{"stats":[{"name":"z.used","value":1}]}');
});

test('names added later are merged into the sorted order', () => {
  const store = createHeapStatsStore();
  store.counter('m');
  assert.deepEqual(scalarsOf(store.reader.scalars()).map((s) => s.name), ['m']);
  store.counter('z');
  store.counter('a');
  assert.deepEqual(scalarsOf(store.reader.scalars()).map((s) => s.name), ['a', 'm', 'z']);
});

test('reset_counters zeroes counters without touching gauges; later increments all count', () => {
  const { a, b } = twoWriters();
  a.counter('c').add(10);
  b.counter('c').add(5);
  a.gauge('g').set(7);
  a.reader.resetCounters();
  assert.equal(a.counter('c').value(), 0);
  assert.equal(a.gauge('g').value(), 7);
  b.counter('c').inc();
  a.counter('c').add(2);
  assert.equal(b.counter('c').value(), 3);
  assert.equal(a.snapshot().get('c'), 3);
});

test('a histogram sample is a bucket increment and a sum in the writer block; unrecorded costs nothing', () => {
  const { a, b } = twoWriters();
  const h = a.histogram('cluster.x.upstream_rq_time', 'milliseconds');
  b.histogram('cluster.x.upstream_rq_time', 'milliseconds');
  b.histogram('never.recorded', 'milliseconds');
  for (const v of [1, 5, 5, 300]) h.recordValue(v);
  b.histogram('cluster.x.upstream_rq_time', 'milliseconds').recordValue(5);
  const [rqTime, never] = a.reader.histograms();
  assert.equal(never!.name, 'never.recorded');
  assert.equal(never!.used, false);
  assert.equal(never!.writers.length, 0);
  assert.equal(rqTime!.used, true);
  assert.equal(rqTime!.writers.length, 2);
  const counts = new Array<number>(BUCKET_COUNT).fill(0);
  let sum = 0;
  for (const w of rqTime!.writers) {
    for (let i = 0; i < BUCKET_COUNT; i++) counts[i]! += w.buckets[i]!;
    sum += w.sum;
  }
  assert.equal(counts[bucketIndex(5)], 3);
  assert.equal(counts[bucketIndex(300)], 1);
  assert.equal(sum, 316);
  // Histograms are not among the counters and gauges.
  assert.equal(a.reader.scalars().length, 0);
});

test('host slots: per-writer cells summed, freed slots reused with a new generation and zeroed', () => {
  const { a, b } = twoWriters();
  const first = a.hosts.allocate();
  const second = a.hosts.allocate();
  a.hostStats(first).rq_total.add(2);
  b.hostStats(first).rq_total.inc();
  b.hostStats(first).cx_active.inc();
  assert.equal(a.hosts.read(first)!.rq_total, 3);
  assert.equal(a.hosts.read(first)!.cx_active, 1);
  a.hosts.free(first);
  assert.equal(a.hosts.read(first), null);
  const reused = a.hosts.allocate();
  assert.equal(reused.slot, first.slot);
  assert.notEqual(reused.generation, first.generation);
  assert.equal(a.hosts.read(reused)!.rq_total, 0);
  assert.equal(a.hosts.highWater, 2);
  assert.notEqual(second.slot, first.slot);
  // The health-flags word is shared and atomic.
  const flags = b.hosts.healthFlags(reused.slot);
  Atomics.or(flags.words, flags.index, 4);
  assert.equal(Atomics.load(a.hosts.healthFlags(reused.slot).words, a.hosts.healthFlags(reused.slot).index), 4);
});

test('shared cells: one block per name for every writer, updated with Atomics', () => {
  const { a, b } = twoWriters();
  const mine = a.cells('cluster.x.circuit_breakers', 4);
  const theirs = b.cells('cluster.x.circuit_breakers', 4);
  mine.add(1, 3);
  theirs.add(1, -1);
  assert.equal(mine.get(1), 2);
  assert.equal(theirs.get(1), 2);
  assert.ok(mine.tryIncrement(2, 1));
  assert.ok(!theirs.tryIncrement(2, 1), 'the limit holds across writers');
  assert.throws(() => b.cells('cluster.x.circuit_breakers', 5), /exist with 4 cells/);
  // Cells are not stats.
  assert.equal(a.reader.scalars().length, 0);
});

test('shared cells: a dead writer\'s share leaves the totals, the others\' stays', () => {
  const { a, b } = twoWriters();
  const mine = a.cells('cluster.x.circuit_breakers', 2);
  const theirs = b.cells('cluster.x.circuit_breakers', 2);
  mine.add(0, 2);
  theirs.add(0, 5);
  theirs.add(1, 1);
  zeroColumnGauges(b.region, b.names, b.hosts, b.column);
  assert.equal(mine.get(0), 2);
  assert.equal(mine.get(1), 0);
});

test('retired columns fold into the current supervisor: counters, histograms and host counters kept', () => {
  const r = region();
  const old = new SharedStatsStore(r, r.claimColumn(0, process.pid));
  const host = old.hosts.allocate();
  old.counter('c').add(7);
  old.gauge('g').add(2);
  old.histogram('h', 'milliseconds').recordValue(42);
  old.hostStats(host).rq_total.add(4);
  old.hostStats(host).rq_active.inc();
  const next = new SharedStatsStore(r, r.claimColumn(1, process.pid));
  r.currentEpoch = 1;
  next.counter('c').add(1);
  zeroColumnGauges(r, old.names, old.hosts, old.column);
  r.retireColumn(old.column);
  assert.equal(reclaimColumns(next, 1), 1);
  assert.equal(next.counter('c').value(), 8);
  assert.equal(next.gauge('g').value(), 0);
  assert.deepEqual({ rq_total: next.hosts.read(host)!.rq_total, rq_active: next.hosts.read(host)!.rq_active }, { rq_total: 4, rq_active: 0 });
  const [h] = next.reader.histograms();
  assert.deepEqual(h!.writers.map((w) => [w.column, w.buckets[bucketIndex(42)], w.sum]), [[next.column, 1, 42]]);
  assert.equal(r.columnState(old.column), ColumnState.Free);
  // The freed column is handed out again, empty.
  assert.equal(r.claimColumn(2, process.pid), old.column);
  assert.equal(next.counter('c').value(), 8);
});

test('a live column whose owner process is gone is retired and folded', () => {
  const r = region();
  const crashed = new SharedStatsStore(r, r.claimColumn(0, DEAD_PID));
  crashed.counter('c').add(3);
  crashed.gauge('server.total_connections').add(4);
  const next = new SharedStatsStore(r, r.claimColumn(1, process.pid));
  r.currentEpoch = 1;
  reclaimColumns(next, 1);
  assert.equal(next.counter('c').value(), 3);
  assert.equal(next.gauge('server.total_connections').value(), 0);
});

test('one epoch initializes at a time; a mark left by a dead process is taken over', () => {
  const r = region();
  r.beginInitializing(process.pid);
  assert.throws(() => r.beginInitializing(process.ppid), StillInitializingError);
  r.endInitializing(process.pid);
  r.beginInitializing(DEAD_PID);
  r.beginInitializing(process.pid);
  r.endInitializing(process.pid);
});

test('a section of another version is refused with a clear message; a missing one is added', () => {
  const memory = new HeapMemory();
  const r = region(memory);
  new NameTable(r);
  const attach = () => StatsRegion.attach({ memory, name: '/t', pid: process.pid });
  // This build added no hosts section yet: a later attach adds it, compatible.
  assert.equal(attach().section(SectionKind.Hosts).view.length > 0, true);
  const stats = DIRECTORY_OFFSET + DIRECTORY_ENTRY_WORDS;
  assert.equal(r.header[stats + DirectoryField.Kind], SectionKind.Stats);
  r.header[stats + DirectoryField.Version] = 9;
  assert.throws(attach, (e: unknown) => {
    assert.ok(e instanceof RegionMismatchError);
    assert.match(e.message, /layout 2\.columns:1\.stats:2\.hosts:2 but the running proxy uses 2\.columns:1\.stats:9\.hosts:2; .*not hot-restart compatible/);
    return true;
  });
});

test('a region is unlinked with all its segments', () => {
  const memory = new HeapMemory();
  const r = region(memory, 64 << 10);
  const store = new SharedStatsStore(r, r.claimColumn(0, 1));
  for (let i = 0; i < 5000; i++) store.counter(`n${i}`);
  assert.ok(r.segments.count > 1);
  StatsRegion.unlinkStale(memory, '/t');
  assert.equal(memory.totalBytes(), 0);
  // The racing intern path: the same name from two writers is one slot.
  const { a, b } = twoWriters();
  assert.equal(a.names.intern('same', StatKind.Counter, 0), b.names.intern('same', StatKind.Counter, 0));
});

/** Shared memory with a size limit, as a full /dev/shm is (posixSharedMemory reports ENOSPC so). */
class LimitedMemory extends HeapMemory {
  constructor(private readonly limit: number) {
    super();
  }

  override create(name: string, bytes: number): ArrayBuffer {
    if (this.totalBytes() + bytes > this.limit) throw new StatsMemoryError(`no room for ${bytes} bytes (${name}): /dev/shm is at its size limit`);
    return super.create(name, bytes);
  }
}

test('a full shared memory: creating the region fails cleanly; while serving, new stats overflow into their process', () => {
  const tiny = new LimitedMemory(64 << 10);
  assert.throws(() => StatsRegion.create({ memory: tiny, name: '/t', pid: process.pid, segmentBytes: 1 << 20 }, 0, 0), /size limit/);
  assert.equal(tiny.totalBytes(), 0);

  const memory = new LimitedMemory(8 << 20);
  const r = StatsRegion.create({ memory, name: '/t', pid: process.pid, segmentBytes: 1 << 20 }, 0, 0);
  const store = new SharedStatsStore(r, r.claimColumn(0, process.pid));
  store.counter(STATS_OVERFLOW);
  const overflow = store.counter(STATS_OVERFLOW);
  let created = 0;
  while (overflow.value() < 10) store.counter(`cluster.c${created++}.upstream_rq_total`).inc();
  const listed = store.snapshot();
  // Every stat before the limit is in the region and counted; the ten after it are not.
  assert.equal(listed.size, created - 10 + 1);
  assert.equal(listed.get(`cluster.c${created - 11}.upstream_rq_total`), 1);
  assert.equal(listed.has(`cluster.c${created - 1}.upstream_rq_total`), false);
  assert.equal(listed.get(STATS_OVERFLOW), 10);
  // An overflowed stat still counts, in its process.
  const lost = store.counter('cluster.late.upstream_rq_total');
  lost.add(3);
  assert.equal(lost.value(), 3);
});

test('scalars(): a set of counters and gauges under one prefix, in shared memory, each name a lookup', () => {
  const { a, b } = twoWriters();
  a.recentLookups.setCapacity(10);
  const set = a.scalars('cluster.c1.', ['membership_change'], ['membership_total', 'max_host_weight'], 'never_import');
  assert.deepEqual(
    [...set.counters, ...set.gauges].map((stat) => stat.name),
    ['cluster.c1.membership_change', 'cluster.c1.membership_total', 'cluster.c1.max_host_weight'],
  );
  set.counters[0]!.inc();
  set.gauges[0]!.set(3);
  b.gauge('cluster.c1.membership_total', 'never_import').set(5);
  // The other writer's counter and this one's are one stat; a never_import gauge sums over writers.
  assert.equal(b.counter('cluster.c1.membership_change').value(), 1);
  assert.equal(a.snapshot().get('cluster.c1.membership_total'), 8);
  assert.equal(a.recentLookups.total, 3);
  assert.deepEqual(a.recentLookups.snapshot().names.map(([name]) => name), ['cluster.c1.membership_change', 'cluster.c1.membership_total', 'cluster.c1.max_host_weight']);
});

test('scalars() in a full region: the set is made one by one, those that fit shared and the rest in the process', () => {
  const memory = new LimitedMemory(8 << 20);
  const r = StatsRegion.create({ memory, name: '/t', pid: process.pid, segmentBytes: 1 << 20 }, 0, 0);
  const store = new SharedStatsStore(r, r.claimColumn(0, process.pid));
  const overflow = store.counter(STATS_OVERFLOW);
  let created = 0;
  while (overflow.value() === 0) store.counter(`cluster.c${created++}.upstream_rq_total`);
  const set = store.scalars('cluster.late.', ['membership_change'], ['membership_total'], 'never_import');
  set.counters[0]!.add(2);
  set.gauges[0]!.set(4);
  assert.equal(set.counters[0]!.value(), 2);
  assert.equal(set.gauges[0]!.value(), 4);
  assert.equal(store.snapshot().has('cluster.late.membership_total'), false);
  assert.equal(overflow.value(), 3);
});

for (const readAt of [0, 2]) {
  test(`ordered() sorts new names a batch per step; names${readAt > 0 ? ' and a /stats read' : ''} in between are neither lost nor doubled`, () => {
    const store = createHeapStatsStore();
    const names = Array.from({ length: 50_000 }, (_, i) => `cluster.c${(i * 7919) % 50_000}.upstream_rq_total`);
    for (const name of names) store.counter(name);
    let steps = 0;
    for (const _ of store.reader.ordered()) {
      steps++;
      // Traffic and admin go on between steps.
      if (steps === 1) store.counter('zz.during_catch_up');
      if (steps === readAt) assert.equal(store.reader.scalars().length, 50_001);
    }
    // Three batches of names, then the order of the runs; a read that sorted everything itself ends it.
    if (readAt === 0) assert.equal(steps, 3);
    else assert.equal(steps, readAt);
    const listed = scalarsOf(store.reader.scalars()).map((s) => s.name);
    assert.equal(listed.length, 50_001);
    assert.deepEqual(listed, [...names, 'zz.during_catch_up'].sort());
  });
}

test('a name another writer publishes while a catch-up sorts is listed by the next read, not skipped for good', () => {
  const store = createHeapStatsStore();
  const names = Array.from({ length: 50_000 }, (_, i) => `cluster.c${(i * 7919) % 50_000}.upstream_rq_total`);
  for (const name of names) store.counter(name);
  // A slot below the catch-up's count that its writer had reserved but not yet published.
  store.counter('cluster.late.upstream_rq_retry');
  const { words, index } = store.names.record(store.names.slotCount - 1)!;
  Atomics.store(words, index + SlotField.State, SlotState.Empty);
  const steps = store.reader.ordered();
  steps.next();
  // Published while the catch-up is between its steps.
  Atomics.store(words, index + SlotField.State, SlotState.Ready);
  while (steps.next().done !== true);
  assert.deepEqual(scalarsOf(store.reader.scalars()).map((s) => s.name), [...names, 'cluster.late.upstream_rq_retry'].sort());
});

test('two readers of ordered() step one catch-up between them, and both find the order made', () => {
  const store = createHeapStatsStore();
  const names = Array.from({ length: 50_000 }, (_, i) => `cluster.c${(i * 7919) % 50_000}.upstream_rq_total`);
  for (const name of names) store.counter(name);
  const supervisor = store.reader.ordered();
  const request = store.reader.ordered();
  // Taking turns, as the supervisor's preparation and a /stats do on the event loop; each
  // step either takes is a step of the work.
  let steps = 0;
  for (let a = supervisor.next(), b = request.next(); a.done !== true || b.done !== true; ) {
    if (a.done !== true) {
      steps++;
      a = supervisor.next();
    }
    if (b.done !== true) {
      steps++;
      b = request.next();
    }
  }
  // One catch-up of 3 steps between them, not one each.
  assert.ok(steps <= 3, `${steps} steps`);
  assert.deepEqual(scalarsOf(store.reader.scalars()).map((s) => s.name), [...names].sort());
  // Up to date: nothing left to step.
  assert.equal(store.reader.ordered().next().done, true);
});

test('internAll: the names not present yet take consecutive slots; present ones keep theirs; no slot is left unwritten', () => {
  const { a, b } = twoWriters();
  const early = a.names.intern('cluster.c.b', StatKind.Counter, 0);
  const before = a.names.slotCount;
  b.names.internAll('cluster.c.', [{ scope: '', names: ['a', 'b', 'c', 'd'], kind: StatKind.Counter, flags: 0 }]);
  assert.equal(a.names.slotCount, before + 3);
  const slots = ['a', 'b', 'c', 'd'].map((s) => a.names.intern(`cluster.c.${s}`, StatKind.Counter, 0));
  assert.deepEqual(slots, [before, early, before + 1, before + 2]);
  assert.deepEqual(slots.map((slot) => a.names.name(slot)), ['cluster.c.a', 'cluster.c.b', 'cluster.c.c', 'cluster.c.d']);
  // Declared again, nothing is added.
  a.names.internAll('cluster.c.', [{ scope: '', names: ['d', 'a'], kind: StatKind.Counter, flags: 0 }]);
  assert.equal(a.names.slotCount, before + 3);
  const ready: number[] = [];
  a.names.forEachReady((slot) => ready.push(slot));
  assert.equal(ready.length, a.names.slotCount);
});

test('internAll: groups of several scopes and kinds, in one run of slots, each name with its group\'s kind and flags', () => {
  const { a, b } = twoWriters();
  const before = a.names.slotCount;
  b.names.internAll('cluster.x.', [
    { scope: '', names: ['upstream_rq_total'], kind: StatKind.Counter, flags: 0 },
    { scope: 'circuit_breakers.high.', names: ['cx_open', 'rq_open'], kind: StatKind.Gauge, flags: SlotFlag.NeverImport },
    { scope: 'ssl.', names: ['handshake'], kind: StatKind.Counter, flags: 0 },
    { scope: '', names: ['upstream_rq_time'], kind: StatKind.Histogram, flags: 0 },
  ]);
  const names = ['upstream_rq_total', 'circuit_breakers.high.cx_open', 'circuit_breakers.high.rq_open', 'ssl.handshake', 'upstream_rq_time'];
  assert.deepEqual(
    names.map((name) => a.names.lookup(`cluster.x.${name}`)),
    names.map((_, i) => before + i),
  );
  const kinds: StatKind[] = [];
  a.names.forEachReady((_slot, kind) => kinds.push(kind), before);
  assert.deepEqual(kinds, [StatKind.Counter, StatKind.Gauge, StatKind.Gauge, StatKind.Counter, StatKind.Histogram]);
  const info = (slot: number) => {
    const { words, index } = a.names.record(slot)!;
    return words[index + SlotField.Info]! >>> 8;
  };
  assert.deepEqual([before, before + 1, before + 2, before + 3].map(info), [0, SlotFlag.NeverImport, SlotFlag.NeverImport, 0]);
});

test('existingCells: null while no process made the cells, and no slot is left behind by asking', () => {
  const { a, b } = twoWriters();
  const before = a.names.slotCount;
  assert.equal(a.existingCells('cluster.c.circuit_breakers.default', 5), null);
  assert.equal(a.names.slotCount, before);
  assert.equal(a.names.lookup('cluster.c.circuit_breakers.default'), -1);
  b.cells('cluster.c.circuit_breakers.default', 5).add(0, 1);
  assert.equal(a.existingCells('cluster.c.circuit_breakers.default', 5)?.get(0), 1);
});
