// The `runtime.*` statistics (Envoy's ALL_RUNTIME_STATS that this build has a use for). The
// gauges describe this epoch's runtime only, so they are never imported from a parent.

import type { Counter, Gauge, StatsStore } from '../stats/stats';

export interface RuntimeStats {
  readonly loadSuccess: Counter;
  readonly loadError: Counter;
  readonly overrideDirExists: Counter;
  readonly overrideDirNotExists: Counter;
  readonly numKeys: Gauge;
  readonly numLayers: Gauge;
  readonly adminOverridesActive: Gauge;
}

export function runtimeStats(store: StatsStore): RuntimeStats {
  const runtime = store.scope('runtime');
  return {
    loadSuccess: runtime.counter('load_success'),
    loadError: runtime.counter('load_error'),
    overrideDirExists: runtime.counter('override_dir_exists'),
    overrideDirNotExists: runtime.counter('override_dir_not_exists'),
    numKeys: runtime.gauge('num_keys', 'never_import'),
    numLayers: runtime.gauge('num_layers', 'never_import'),
    adminOverridesActive: runtime.gauge('admin_overrides_active', 'never_import'),
  };
}
