// Reclaiming the private stats regions of dead proxies, on real POSIX shared memory: only
// regions whose owner is gone go; a live owner's (by pid, or by the lock it holds) stay.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { test, type TestContext } from 'node:test';
import * as addon from '../../src/native/addon';
import { createRegion, posixSharedMemory } from '../../src/shared_memory/posix_shared_memory';
import { lockRegion, privateRegionName, privateRegionObjects, reclaimDeadPrivateRegions, shmEntries } from '../../src/shared_memory/private_regions';
import { StatsRegion } from '../../src/shared_memory/region';
import { processAlive } from '../../src/shared_memory/process_alive';

const BOUNDED = { timeout: 20_000 };
/** Regions made while a reclaimer sweeps: enough that one made unlocked for a moment is caught. */
const RACED_CREATIONS = 100;

/**
 * A proxy in another pid namespace that shares /dev/shm: it sees no process with the pid given
 * as its argument and reclaims that pid's region whenever its lock is free, over and over
 * until its stdin closes. Says "sweeping" once it does.
 */
const RECLAIMER = `
const { privateRegionObjects, reclaimDeadPrivateRegions, shmEntries } = require(${JSON.stringify(require.resolve('../../src/shared_memory/private_regions'))});
const { posixSharedMemory } = require(${JSON.stringify(require.resolve('../../src/shared_memory/posix_shared_memory'))});
const pid = Number(process.argv[1]);
const entries = () => shmEntries().filter((entry) => privateRegionObjects([entry]).has(pid));
const sweep = () => {
  for (let n = 0; n < 50; n++) reclaimDeadPrivateRegions({ memory: posixSharedMemory, ownPid: -1, alive: () => false, entries });
  setImmediate(sweep);
};
process.stdin.on('end', () => process.exit(0)).resume();
sweep();
console.log('sweeping');
`;

/** The pid of a process that has exited (and been reaped). */
function deadPid(): number {
  const pid = spawnSync(process.execPath, ['-e', '0']).pid!;
  assert.ok(!processAlive(pid));
  return pid;
}

/** A region of `pid` with a grown segment or two, as a supervisor leaves it; removed after the test. */
function leaveRegion(t: TestContext, pid: number): string[] {
  const name = privateRegionName(pid);
  const region = StatsRegion.create({ memory: posixSharedMemory, name, pid, segmentBytes: 4096 }, 0, Date.now());
  region.segments.alloc(4096);
  t.after(() => StatsRegion.unlinkStale(posixSharedMemory, name));
  return objectsOf(pid);
}

function objectsOf(pid: number): string[] {
  return (privateRegionObjects(shmEntries()).get(pid) ?? []).sort();
}

/** Reclaims as a proxy with pid `ownPid` starting now would, looking only at `pids`' objects. */
function reclaim(ownPid: number, pids: readonly number[]) {
  const entries = () => shmEntries().filter((entry) => pids.some((pid) => privateRegionObjects([entry]).has(pid)));
  return reclaimDeadPrivateRegions({ memory: posixSharedMemory, ownPid, alive: processAlive, entries });
}

test('names: roots and segments by owner pid, nothing else', () => {
  const found = privateRegionObjects(['proxy_private_stats_12', 'proxy_private_stats_12.3', 'proxy_private_stats_7.1', 'proxy_shared_memory_0', 'proxy_private_stats_x', 'other']);
  assert.deepEqual([...found], [
    [12, ['/proxy_private_stats_12', '/proxy_private_stats_12.3']],
    [7, ['/proxy_private_stats_7.1']],
  ]);
});

test('a dead owner\'s region goes, root and segments; a live one\'s stays', BOUNDED, async (t) => {
  const dead = deadPid();
  const objects = leaveRegion(t, dead);
  assert.ok(objects.length >= 3, objects.join(' '));
  const live = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  t.after(() => live.kill('SIGKILL'));
  const kept = leaveRegion(t, live.pid!);

  assert.deepEqual(reclaim(process.pid, [dead, live.pid!]), [{ pid: dead, objects, error: null }]);
  assert.deepEqual(objectsOf(dead), []);
  assert.deepEqual(objectsOf(live.pid!), kept);
});

test('segments left without their root go with a dead owner', BOUNDED, (t) => {
  const dead = deadPid();
  const objects = leaveRegion(t, dead);
  posixSharedMemory.unlink(privateRegionName(dead));
  const segments = objects.filter((o) => o !== privateRegionName(dead));
  assert.deepEqual(reclaim(process.pid, [dead]), [{ pid: dead, objects: segments, error: null }]);
  assert.deepEqual(objectsOf(dead), []);
});

test('a region whose lock is held stays though no process here has its pid (another pid namespace)', BOUNDED, (t) => {
  const dead = deadPid();
  const objects = leaveRegion(t, dead);
  const lock = lockRegion(privateRegionName(dead), false);
  t.after(() => addon.unlockFile(lock));
  assert.deepEqual(reclaim(process.pid, [dead]), []);
  assert.deepEqual(objectsOf(dead), objects);
});

test('a region named by this process\'s own pid is a dead proxy\'s (pid reuse): it goes unless locked', BOUNDED, (t) => {
  const own = process.pid;
  const objects = leaveRegion(t, own);
  assert.deepEqual(reclaim(own, [own]), [{ pid: own, objects, error: null }]);
  assert.ok(!fs.existsSync(`/dev/shm${privateRegionName(own)}`));
});

test('a private region is locked from the moment it exists: a reclaimer that cannot see its owner never takes it', BOUNDED, async (t) => {
  const name = privateRegionName(process.pid);
  t.after(() => StatsRegion.unlinkStale(posixSharedMemory, name));
  const reclaimer = spawn(process.execPath, ['-e', RECLAIMER, String(process.pid)], { stdio: ['pipe', 'pipe', 'inherit'] });
  t.after(() => reclaimer.kill('SIGKILL'));
  await new Promise((resolve) => reclaimer.stdout!.once('data', resolve));

  for (let n = 0; n < RACED_CREATIONS; n++) {
    const handle = createRegion({ baseId: 0, restartEpoch: 0, disableHotRestart: true, startMs: Date.now() });
    // What a worker does with the name: it must lead to this region, and the region be locked.
    StatsRegion.attach({ memory: posixSharedMemory, name, pid: process.pid });
    assert.throws(() => lockRegion(name, false), { code: 'EAGAIN' }, `creation ${n}`);
    handle.region.unlink();
  }
  reclaimer.stdin!.end();
});
