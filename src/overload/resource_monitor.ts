// What the overload manager reads a resource's pressure from (Envoy's ResourceMonitor): a
// fraction of the resource's limit, 1 at the limit. Each worker creates its own monitors.

import type { ResourceMonitorConfig } from '../config/model';

export interface ResourceMonitor {
  /** The pressure now; rejects with the reason it cannot be read (counted in failed_updates). */
  read(): Promise<number>;
}

/** A proxy.resource_monitors descriptor's factory. */
export type ResourceMonitorFactory = (config: ResourceMonitorConfig) => ResourceMonitor;

/** `config` as the monitor of `kind` takes it; the registry hands each factory its own descriptor's model. */
export function monitorConfig<K extends ResourceMonitorConfig['kind']>(config: ResourceMonitorConfig, kind: K): Extract<ResourceMonitorConfig, { kind: K }> {
  if (config.kind !== kind) throw new Error(`the ${kind} monitor was given a ${config.kind} monitor's configuration`);
  return config as Extract<ResourceMonitorConfig, { kind: K }>;
}
