// --disable-extensions: a disabled extension is gone from the registry, so a configuration that
// names one fails as if it did not exist (Envoy's message), saying why.

import type { ConfigExtensions } from '../extension';
import { FieldError } from '../errors';
import { clusterExtensionName, extensionKey } from '../extension_registry';
import { ExtensionVisitor, forEachClusterExtension, forEachExtension, forEachPerFilterConfigName, forEachRoutePerFilterConfigName, SITE_CATEGORIES } from '../extension_sites';
import { childPath, indexPath } from '../field_path';
import { enumField, JsonObject, messageField, messageList, stringField } from '../json';

const WHY = '(disabled by --disable-extensions)';

/**
 * @param bootstrap decoded, with extension names canonicalized
 * @param disabled keys from ExtensionRegistry.resolveDisabled
 * @throws FieldError at the first use of a disabled extension
 */
export function checkDisabledExtensions(bootstrap: JsonObject, disabled: ReadonlySet<string>, extensions: ConfigExtensions): void {
  if (disabled.size === 0) return;
  forEachExtension(bootstrap, extensions, refuseDisabled(disabled));
  // A per-route config names its filter too: Envoy finds no factory for it.
  forEachPerFilterConfigName(bootstrap, extensions, refuseDisabledPerFilterConfig(disabled, extensions));
  const resources = messageField(bootstrap, 'static_resources') ?? {};
  messageList(resources, 'clusters').forEach((cluster, i) => checkClusterType(cluster, indexPath('static_resources.clusters', i), disabled, extensions));
}

/**
 * The same for one cluster at `clusterPath` (a CDS resource), so that CDS refuses what a static
 * cluster would be refused for.
 * @param cluster decoded, with extension names canonicalized
 */
export function checkClusterDisabledExtensions(cluster: JsonObject, clusterPath: string, disabled: ReadonlySet<string>, extensions: ConfigExtensions): void {
  if (disabled.size === 0) return;
  forEachClusterExtension(cluster, clusterPath, extensions, refuseDisabled(disabled));
  checkClusterType(cluster, clusterPath, disabled, extensions);
}

/**
 * The same for one RouteConfiguration at `path` (an RDS resource): its per-route configs.
 * @param routeConfig decoded
 */
export function checkRouteConfigDisabledExtensions(routeConfig: JsonObject, path: string, disabled: ReadonlySet<string>, extensions: ConfigExtensions): void {
  if (disabled.size === 0) return;
  forEachRoutePerFilterConfigName(routeConfig, path, refuseDisabledPerFilterConfig(disabled, extensions));
}

function refuseDisabledPerFilterConfig(disabled: ReadonlySet<string>, extensions: ConfigExtensions): (name: string, path: string) => void {
  return (name, path) => {
    if (disabled.has(extensionKey('proxy.filters.http', extensions.canonicalName(name)))) throw new FieldError(path, `Didn't find a registered implementation for name: '${name}' ${WHY}`);
  };
}

function refuseDisabled(disabled: ReadonlySet<string>): ExtensionVisitor {
  return (extension, site, path) => {
    const name = stringField(extension, 'name');
    if (disabled.has(extensionKey(SITE_CATEGORIES[site], name))) {
      throw new FieldError(childPath(path, 'name'), `Didn't find a registered implementation for name: '${name}' ${WHY}`);
    }
  };
}

/** The cluster's discovery type, or its custom cluster_type, as a cluster extension. */
function checkClusterType(cluster: JsonObject, clusterPath: string, disabled: ReadonlySet<string>, extensions: ConfigExtensions): void {
  const customType = messageField(cluster, 'cluster_type');
  const name = customType === undefined ? clusterExtensionName(enumField(cluster, 'type', 'STATIC')) : extensions.canonicalName(stringField(customType, 'name'));
  if (disabled.has(extensionKey('proxy.clusters', name))) {
    throw new FieldError(
      customType === undefined ? childPath(clusterPath, 'type') : childPath(childPath(clusterPath, 'cluster_type'), 'name'),
      `Didn't find a registered cluster factory implementation for name: '${name}' ${WHY}`,
    );
  }
}
