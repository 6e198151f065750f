// One Listener resource of an LDS update through exactly the stages a static listener goes
// through: it stands as the only listener of a copy of the bootstrap, which is checked and
// modelled as load.ts does, and every error found under that listener is reported at the
// resource's own path. So a listener is refused or accepted alike from either place.

import type { ConfigExtensions } from './extension';
import { FieldError, FieldErrors } from './errors';
import { joinPath } from './field_path';
import { cloneJson, JsonObject, messageField } from './json';
import { checkedBootstrapModel } from './load';
import type { Bootstrap, ListenerConfig } from './model';

/** Where the resource stands in the bootstrap it is checked in. */
export const LISTENER_IN_BOOTSTRAP = 'static_resources.listeners[0]';

export interface LoadedListener {
  readonly config: ListenerConfig;
  /** The resource with extension names canonicalized: what /config_dump shows and updates are compared by. */
  readonly source: JsonObject;
  /** The bootstrap it was checked in, whose only listener it is: what the workers' builders are built over. */
  readonly bootstrap: Bootstrap;
}

/**
 * @param resource decoded v3 JSON (the resource decoder's output)
 * @param path where the resource sits in its update, e.g. `resources[1]`
 * @param bootstrapSource the serving bootstrap's source (Bootstrap.source): its clusters, sources and runtime
 * @param disabledExtensions --disable-extensions, resolved
 * @param dynamicClusters the cluster manager's clusters of the moment beyond the bootstrap's (CDS's), which its routes may name as Envoy's do
 * @throws FieldError (FieldErrors for several) at a path below `path`
 */
export function loadListenerResource(
  resource: JsonObject,
  path: string,
  bootstrapSource: JsonObject,
  disabledExtensions: ReadonlySet<string>,
  extensions: ConfigExtensions,
  serviceCluster: string,
  dynamicClusters: ReadonlySet<string>,
): LoadedListener {
  const listener = cloneJson(resource);
  const staticResources = messageField(bootstrapSource, 'static_resources') ?? {};
  const wrapper: JsonObject = { ...bootstrapSource, static_resources: { ...staticResources, listeners: [listener] } };
  try {
    const bootstrap = checkedBootstrapModel(wrapper, extensions, disabledExtensions, serviceCluster, dynamicClusters);
    return { config: bootstrap.listeners[0]!, source: listener, bootstrap };
  } catch (error) {
    throw rebaseListenerError(error, path);
  }
}

/**
 * An error at `static_resources.listeners[0]...` (the resource in its bootstrap) moved to the
 * same field under `path`; any other passes as it is.
 */
export function rebaseListenerError(error: unknown, path: string): unknown {
  const rebase = (e: FieldError) =>
    e.fieldPath === LISTENER_IN_BOOTSTRAP || e.fieldPath.startsWith(`${LISTENER_IN_BOOTSTRAP}.`) || e.fieldPath.startsWith(`${LISTENER_IN_BOOTSTRAP}[`)
      ? new FieldError(joinPath(path, e.fieldPath.slice(LISTENER_IN_BOOTSTRAP.length).replace(/^\./, '')), e.reason)
      : e;
  if (error instanceof FieldErrors) return new FieldErrors(error.all.map(rebase));
  if (error instanceof FieldError) return rebase(error);
  return error;
}
