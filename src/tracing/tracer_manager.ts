// A worker's tracers (Envoy's HttpTracerManager): one per distinct tracer configuration, shared
// by the connection managers that name it (the bootstrap's tracing.http, or a provider of their
// own), so that their spans go out in the same reports. Closed when the worker stops.

import type { TracerConfig } from '../config/model';
import type { Tracer, TracerContext, TracerFactory } from './tracer';

export class TracerManager {
  private readonly tracers = new Map<string, Tracer>();

  /** @param factories the tracer extensions' factories, by name */
  constructor(
    private readonly factories: ReadonlyMap<string, TracerFactory>,
    private readonly context: TracerContext,
  ) {}

  /** The tracer of `config`, made on first ask. */
  tracer(config: TracerConfig): Tracer {
    const key = JSON.stringify(config);
    let tracer = this.tracers.get(key);
    if (tracer === undefined) {
      const factory = this.factories.get(config.name);
      // Validation admits the registered tracers only.
      if (factory === undefined) throw new Error(`no tracer named '${config.name}' is registered`);
      tracer = factory(config, this.context);
      this.tracers.set(key, tracer);
    }
    return tracer;
  }

  close(): void {
    for (const tracer of this.tracers.values()) tracer.close();
    this.tracers.clear();
  }
}
