// The supervisor's runtime (Envoy's LoaderImpl): loads the layers, reloads them when a disk
// layer's symlink is swapped, /runtime_modify changes the admin layer or an RTDS layer is
// updated, keeps the runtime.* stats, and hands every new final map to `onChange` (which sends
// it to the workers).

import type { RuntimeLayerConfig } from '../config/model';
import type { Logger } from '../log/logger_api';
import { mergeAdminValues } from './admin_layer';
import { readDiskLayerIfPresent } from './disk_layer';
import { finalValues, LoadedLayer, loadLayers } from './layered_runtime';
import type { RuntimeValues } from './runtime';
import type { RuntimeStats } from './runtime_stats';
import { SymlinkWatcher } from './symlink_watcher';

export const NO_ADMIN_LAYER = 'No admin layer specified';

export class NoAdminLayerError extends Error {
  override readonly name = 'NoAdminLayerError';
  constructor() {
    super(NO_ADMIN_LAYER);
  }
}

export interface RuntimeLoaderDeps {
  readonly layers: readonly RuntimeLayerConfig[];
  /** --service-cluster, else the bootstrap's node.cluster: the append_service_cluster directory. */
  readonly serviceCluster: string;
  readonly stats: RuntimeStats;
  readonly log: Logger;
  readonly onChange: (values: RuntimeValues) => void;
  /** How often the disk layers' symlinks are checked besides the file system watch. */
  readonly pollIntervalMs: number;
}

export class RuntimeLoader {
  private admin: ReadonlyMap<string, string> = new Map();
  private readonly rtds = new Map<string, RuntimeValues>();
  private loaded: readonly LoadedLayer[] = [];
  private final: RuntimeValues = [];
  private readonly watcher: SymlinkWatcher | null;
  private readonly log: Logger;

  constructor(private readonly deps: RuntimeLoaderDeps) {
    this.log = deps.log.forFile(__filename);
    const links = [...new Set(deps.layers.flatMap((l) => (l.kind === 'disk' ? [l.symlinkRoot] : [])))];
    this.watcher = links.length === 0 ? null : new SymlinkWatcher(links, () => this.reload('disk layer symlink changed'), deps.pollIntervalMs);
    this.load();
  }

  /** Begins watching the disk layers. */
  start(): void {
    this.watcher?.start();
  }

  close(): void {
    this.watcher?.close();
  }

  layers(): readonly LoadedLayer[] {
    return this.loaded;
  }

  values(): RuntimeValues {
    return this.final;
  }

  /**
   * Merges /runtime_modify's values into the admin layer (an empty value removes one) and
   * reloads every layer, as Envoy does.
   * @throws NoAdminLayerError
   */
  modify(updates: Iterable<readonly [string, string]>): void {
    if (!this.deps.layers.some((l) => l.kind === 'admin')) throw new NoAdminLayerError();
    this.admin = mergeAdminValues(this.admin, updates);
    this.deps.stats.adminOverridesActive.set(this.admin.size === 0 ? 0 : 1);
    this.reload('admin layer modified');
  }

  /** An RTDS layer's new values (validated by its subscription): every layer is reloaded, as Envoy does. */
  setRtdsLayer(name: string, values: RuntimeValues): void {
    this.rtds.set(name, values);
    this.reload(`RTDS layer '${name}' updated`);
  }

  private reload(why: string): void {
    this.load();
    this.log.debug(`runtime reloaded (${why}): ${this.final.length} keys`);
    this.deps.onChange(this.final);
  }

  private load(): void {
    const { stats } = this.deps;
    const log = this.log;
    const result = loadLayers(this.deps.layers, {
      serviceCluster: this.deps.serviceCluster,
      admin: this.admin,
      readDisk: readDiskLayerIfPresent,
      rtds: this.rtds,
    });
    for (const error of result.errors) log.warn(`error loading runtime values: ${error}`);
    this.loaded = result.layers;
    this.final = finalValues(result.layers);
    stats.numLayers.set(result.layers.length);
    stats.numKeys.set(this.final.length);
    (result.errors.length === 0 ? stats.loadSuccess : stats.loadError).inc();
    (result.diskLayers > 1 ? stats.overrideDirExists : stats.overrideDirNotExists).inc();
  }
}
