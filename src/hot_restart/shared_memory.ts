// Where the stats region lives. With hot restart, one region per base id that every epoch
// shares (epoch 0 replaces a stale one); without it, a private region for this process tree.

import * as addon from '../native/addon';
import { LayoutParams } from '../stats/region_layout';
import { StatsRegion } from '../stats/region';

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

export function createRegion(opts: {
  baseId: number;
  restartEpoch: number;
  disableHotRestart: boolean;
  layout: LayoutParams;
  startMs: number;
}): RegionHandle {
  if (opts.disableHotRestart) {
    const name = `/proxy_private_stats_${process.pid}`;
    const buffer = addon.shmCreate(name, StatsRegion.bytesFor(opts.layout));
    return { name, region: StatsRegion.initialize(buffer, opts.layout, opts.baseId, opts.startMs), privateRegion: true };
  }
  const name = sharedRegionName(opts.baseId);
  if (opts.restartEpoch > 0) {
    return { name, region: StatsRegion.attach(addon.shmOpen(name), opts.layout), privateRegion: false };
  }
  try {
    addon.shmUnlink(name);
  } catch (e) {
    if ((e as addon.NativeError).code !== 'ENOENT') throw e;
  }
  const buffer = addon.shmCreate(name, StatsRegion.bytesFor(opts.layout));
  return { name, region: StatsRegion.initialize(buffer, opts.layout, opts.baseId, opts.startMs), privateRegion: false };
}

/** A worker maps the region its supervisor named. */
export function attachRegion(name: string, layout: LayoutParams): StatsRegion {
  return StatsRegion.attach(addon.shmOpen(name), layout);
}
