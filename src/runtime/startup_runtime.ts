// The runtime as it stands at start-up (static and disk layers; the admin and RTDS layers are empty), for
// the checks of the configuration that depend on it, in --mode validate as when serving.

import type { RuntimeLayerConfig } from '../config/model';
import { readDiskLayerIfPresent } from './disk_layer';
import { finalValues, loadLayers } from './layered_runtime';
import { Runtime } from './runtime';

export function startupRuntime(layers: readonly RuntimeLayerConfig[], serviceCluster: string): Runtime {
  const loaded = loadLayers(layers, { serviceCluster, admin: new Map(), readDisk: readDiskLayerIfPresent, rtds: new Map() });
  return new Runtime(finalValues(loaded.layers));
}
