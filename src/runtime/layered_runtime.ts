// Envoy's layered runtime: the configured layers, loaded in order, each overriding the ones
// before it. Pure: what a disk layer holds comes from the injected reader.

import type { RuntimeLayerConfig } from '../config/model';
import { diskLayerPath } from './disk_layer';
import type { RuntimeValues } from './runtime';

export interface LoadedLayer {
  readonly name: string;
  readonly values: RuntimeValues;
}

export interface LayersLoad {
  /** The layers present, in stacking order: a disk layer whose directory is missing is left out. */
  readonly layers: readonly LoadedLayer[];
  /** Disk layers read. */
  readonly diskLayers: number;
  /** Disk layers that failed to read (left out as well). */
  readonly errors: readonly string[];
}

export interface LayerSources {
  readonly serviceCluster: string;
  /** The admin layer's values (/runtime_modify). */
  readonly admin: ReadonlyMap<string, string>;
  /** A disk layer's directory: its values, or null when it does not exist; throws when unreadable. */
  readonly readDisk: (dir: string) => RuntimeValues | null;
  /** The RTDS layers' values by layer name; a layer not in it has had no update yet (empty). */
  readonly rtds: ReadonlyMap<string, RuntimeValues>;
}

export function loadLayers(configs: readonly RuntimeLayerConfig[], sources: LayerSources): LayersLoad {
  const layers: LoadedLayer[] = [];
  const errors: string[] = [];
  let diskLayers = 0;
  for (const config of configs) {
    switch (config.kind) {
      case 'static':
        layers.push({ name: config.name, values: config.values });
        break;
      case 'admin':
        layers.push({ name: config.name, values: [...sources.admin] });
        break;
      case 'rtds':
        // Present from the start, empty until its first update, as Envoy's.
        layers.push({ name: config.name, values: sources.rtds.get(config.name) ?? [] });
        break;
      case 'disk': {
        const dir = diskLayerPath(config.symlinkRoot, config.subdirectory, config.appendServiceCluster, sources.serviceCluster);
        try {
          const values = sources.readDisk(dir);
          if (values === null) break;
          layers.push({ name: config.name, values });
          diskLayers++;
        } catch (e) {
          errors.push(`runtime layer '${config.name}' (${dir}): ${(e as Error).message}`);
        }
        break;
      }
    }
  }
  return { layers, diskLayers, errors };
}

/** The snapshot's map: every key with the value of the topmost layer that has it. */
export function finalValues(layers: readonly LoadedLayer[]): RuntimeValues {
  const values = new Map<string, string>();
  for (const layer of layers) for (const [key, value] of layer.values) values.set(key, value);
  return [...values];
}
