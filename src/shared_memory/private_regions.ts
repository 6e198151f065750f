// The stats regions private to one process tree (--disable-hot-restart), named by the pid of the
// supervisor that owns them. A supervisor killed with SIGKILL cannot remove its own, so each
// start reclaims those whose owner is gone: a crash loop must not fill /dev/shm.
//
// The owner holds an flock on its region's root from the moment the root exists (shmCreate
// takes it before the root is even sized) until it exits. A region is reclaimed only when
// that lock is free (no live owner, in any pid namespace that shares /dev/shm) and its pid
// names no live process here, or names this process (which has no region yet: a leftover of a
// dead proxy that had the same pid). A live process that merely reuses a dead owner's pid keeps
// the region until it is gone too: a region is never taken from a proxy that could be alive.

import * as fs from 'node:fs';
import * as addon from '../native/addon';
import { StatsRegion } from './region';
import type { SharedMemorySource } from './shared_memory_source';

/** Where Linux keeps POSIX shared memory objects (`/name` is `/dev/shm/name`). */
const SHM_DIR = '/dev/shm';
const PRIVATE_PREFIX = 'proxy_private_stats_';
/** `proxy_private_stats_<pid>` (the root) and `proxy_private_stats_<pid>.<n>` (its segments). */
const PRIVATE_OBJECT = new RegExp(`^${PRIVATE_PREFIX}(\\d+)(?:\\.\\d+)?$`);

export function privateRegionName(pid: number): string {
  return `/${PRIVATE_PREFIX}${pid}`;
}

/** The objects of private regions among the entries of /dev/shm, by owner pid. */
export function privateRegionObjects(entries: readonly string[]): Map<number, string[]> {
  const byPid = new Map<number, string[]>();
  for (const entry of entries) {
    const match = PRIVATE_OBJECT.exec(entry);
    if (match === null) continue;
    const pid = Number(match[1]);
    byPid.set(pid, [...(byPid.get(pid) ?? []), `/${entry}`]);
  }
  return byPid;
}

/** Takes the owner's lock on a region's root: held while the owner lives. */
export function lockRegion(name: string, wait: boolean): number {
  return addon.lockFile(`${SHM_DIR}${name}`, wait);
}

export interface ReclaimedRegion {
  readonly pid: number;
  /** Every object of the region, the root first when there was one. */
  readonly objects: readonly string[];
  /** Why it could not be removed (another user's region, say); null when it was. */
  readonly error: Error | null;
}

export interface ReclaimDeps {
  readonly memory: SharedMemorySource;
  readonly ownPid: number;
  readonly alive: (pid: number) => boolean;
  /** The entries of /dev/shm. */
  readonly entries: () => readonly string[];
}

/** Removes the private regions of dead owners; returns those it found, removed or not. */
export function reclaimDeadPrivateRegions(deps: ReclaimDeps): ReclaimedRegion[] {
  const reclaimed: ReclaimedRegion[] = [];
  for (const [pid, objects] of privateRegionObjects(deps.entries())) {
    if (pid !== deps.ownPid && deps.alive(pid)) continue;
    try {
      if (!reclaim(deps.memory, privateRegionName(pid), objects)) continue;
      reclaimed.push({ pid, objects: objects.sort(), error: null });
    } catch (error) {
      reclaimed.push({ pid, objects: objects.sort(), error: error as Error });
    }
  }
  return reclaimed;
}

/** Unlinks the region `root` and its `objects` unless its owner holds its lock; false when it does. */
function reclaim(memory: SharedMemorySource, root: string, objects: readonly string[]): boolean {
  let lock: number | null = null;
  if (objects.includes(root)) {
    try {
      lock = lockRegion(root, false);
    } catch (error) {
      // Held: its owner lives, in a pid namespace of its own. Absent: gone since the listing.
      const code = (error as addon.NativeError).code;
      if (code === 'EAGAIN' || code === 'ENOENT') return false;
      throw error;
    }
  }
  try {
    if (lock !== null) StatsRegion.unlinkStale(memory, root);
    // Segments the root no longer counted (a crash while the region grew) go too.
    for (const object of objects) {
      if (object !== root) unlinkIfPresent(memory, object);
    }
    return true;
  } finally {
    if (lock !== null) addon.unlockFile(lock);
  }
}

function unlinkIfPresent(memory: SharedMemorySource, name: string): void {
  try {
    memory.unlink(name);
  } catch (error) {
    if ((error as addon.NativeError).code !== 'ENOENT') throw error;
  }
}

/** The entries of /dev/shm; none where there is no such directory. */
export function shmEntries(): string[] {
  try {
    return fs.readdirSync(SHM_DIR);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}
