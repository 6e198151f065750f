// Where the stats region lives. With hot restart, one region per base id that every epoch
// shares (epoch 0 replaces a stale one); without it, a private region for this process tree
// (private_regions.ts reclaims those whose owner died).

import * as addon from '../native/addon';
import { StatsRegion } from './region';
import { StatsMemoryError } from './segments';
import { NoSuchObjectError, SharedMemorySource } from './shared_memory_source';
import { privateRegionName } from './private_regions';

/** POSIX shared memory; a full /dev/shm is reported as the limit it is. */
export const posixSharedMemory: SharedMemorySource = {
  create: (name, bytes) => createObject(name, bytes, false),
  open(name) {
    try {
      return addon.shmOpen(name);
    } catch (e) {
      if ((e as addon.NativeError).code === 'ENOENT') throw new NoSuchObjectError((e as Error).message);
      throw e;
    }
  },
  unlink(name) {
    addon.shmUnlink(name);
  },
};

/**
 * posixSharedMemory, but this process locks the object `root` as it creates it and holds the
 * lock until it exits: private_regions.ts never finds a live owner's region unlocked.
 */
function ownedRootMemory(root: string): SharedMemorySource {
  return { ...posixSharedMemory, create: (name, bytes) => createObject(name, bytes, name === root) };
}

function createObject(name: string, bytes: number, holdLock: boolean): ArrayBuffer {
  try {
    return addon.shmCreate(name, bytes, holdLock);
  } catch (e) {
    const code = (e as addon.NativeError).code;
    if (code === 'ENOSPC' || code === 'ENOMEM') {
      throw new StatsMemoryError(
        `cannot add ${bytes} bytes of stats shared memory (${name}): /dev/shm is full or at its size limit ` +
          `(${(e as Error).message}); enlarge /dev/shm or lower the number of stats`,
      );
    }
    throw e;
  }
}

export interface RegionHandle {
  readonly name: string;
  readonly region: StatsRegion;
  /** True when this process created the region and no later epoch may need it. */
  readonly privateRegion: boolean;
}

/** Envoy scales the base id so that ids of neighbouring instances never share sockets. */
export function scaledBaseId(baseId: number): number {
  return baseId * 10;
}

export function sharedRegionName(baseId: number): string {
  return `/proxy_shared_memory_${scaledBaseId(baseId)}`;
}

export function createRegion(opts: { baseId: number; restartEpoch: number; disableHotRestart: boolean; startMs: number }): RegionHandle {
  const pid = process.pid;
  if (opts.disableHotRestart) {
    const name = privateRegionName(pid);
    const region = StatsRegion.create({ memory: ownedRootMemory(name), name, pid }, opts.baseId, opts.startMs);
    return { name, region, privateRegion: true };
  }
  const name = sharedRegionName(opts.baseId);
  if (opts.restartEpoch > 0) {
    return { name, region: StatsRegion.attach({ memory: posixSharedMemory, name, pid }), privateRegion: false };
  }
  StatsRegion.unlinkStale(posixSharedMemory, name);
  return { name, region: StatsRegion.create({ memory: posixSharedMemory, name, pid }, opts.baseId, opts.startMs), privateRegion: false };
}

/** A worker maps the region its supervisor named. */
export function attachRegion(name: string): StatsRegion {
  return StatsRegion.attach({ memory: posixSharedMemory, name, pid: process.pid });
}
