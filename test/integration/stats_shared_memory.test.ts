// Stats written by concurrent processes on one shared-memory region add up exactly, while the
// region grows by segments that each process maps as it meets them.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { posixSharedMemory } from '../../src/shared_memory/posix_shared_memory';
import { BUCKET_COUNT } from '../../src/stats/histogram_buckets';
import { NameTable } from '../../src/stats/name_table';
import { StatsReader } from '../../src/stats/reader';
import { StatsRegion } from '../../src/shared_memory/region';
import { scalarsOf } from '../helpers/histogram_samples';

const run = promisify(execFile);

test('four processes incrementing the same stats concurrently lose nothing', { timeout: 90_000 }, async () => {
  const name = `/proxy_test_stats_${process.pid}`;
  const region = StatsRegion.create({ memory: posixSharedMemory, name, pid: process.pid }, 0, Date.now());
  try {
    const writer = path.join(__dirname, '..', 'helpers', 'stats_writer.js');
    const iterations = 100_000;
    const unique = 20_000;
    await Promise.all([1, 2, 3, 4].map(() => run(process.execPath, [writer, name, String(iterations), String(unique)], { timeout: 80_000 })));
    const names = new NameTable(region);
    const reader = new StatsReader(region, names);
    const stats = new Map(scalarsOf(reader.scalars()).map((s) => [s.name, s.value]));
    assert.equal(stats.get('shared.requests'), 4 * iterations);
    assert.equal(stats.get('shared.active'), 4 * (iterations / 2));
    // Each of the 64 racing names exists once, and its counts add up.
    const racing = [...stats.keys()].filter((k) => k.startsWith('race.'));
    assert.equal(racing.length, 64);
    assert.equal(racing.reduce((sum, k) => sum + stats.get(k)!, 0), 4 * iterations);
    const own = [...stats].filter(([k]) => k.startsWith('own.'));
    assert.equal(own.length, 4 * unique);
    assert.ok(own.every(([, v]) => v === 1));
    assert.ok(region.segments.count > 1, `the region grew past its first segment (${region.segments.count})`);
    const [latency] = reader.histograms();
    assert.equal(latency!.name, 'shared.latency');
    assert.equal(latency!.writers.length, 4);
    let samples = 0;
    for (const w of latency!.writers) for (let b = 0; b < BUCKET_COUNT; b++) samples += w.buckets[b]!;
    assert.equal(samples, 4 * iterations);
  } finally {
    region.unlink();
  }
});
