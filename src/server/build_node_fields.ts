// What the server writes into the bootstrap's node before anything reads it (as Envoy does):
// this build's user agent, its version, and the extensions it registers. /server_info and
// /config_dump show them; every management server is sent them.

import type { ConfigExtensions } from '../config/extension';
import { extensionKey } from '../config/extension_registry';
import type { JsonObject } from '../config/json';
import { type BuildInfo, tlsLibrary } from './build_info';

/** config.core.v3.Node's user_agent_name, user_agent_build_version and extensions, in that order. */
/**
 * @param extensions the registry whose extensions are listed
 * @param disabledExtensions --disable-extensions
 */
export function buildNodeFields(build: BuildInfo, extensions: ConfigExtensions, disabledExtensions: readonly string[]): JsonObject {
  const disabled = extensions.resolveDisabled(disabledExtensions).keys;
  return {
    user_agent_name: 'proxy',
    user_agent_build_version: userAgentBuildVersion(build),
    extensions: extensions.listed().map((e) => ({
      name: e.name,
      category: e.category,
      type_descriptor: e.typeDescriptor,
      disabled: disabled.has(extensionKey(e.category, e.name)),
    })),
  };
}

/** config.core.v3.BuildVersion: the release as a SemanticVersion, and Envoy's build metadata keys. */
function userAgentBuildVersion(build: BuildInfo): JsonObject {
  const [major = 0, minor = 0, patch = 0] = build.version.split(/[.-]/).map((part) => Number(part) || 0);
  return {
    version: { major_number: major, minor_number: minor, patch },
    metadata: {
      'build.type': build.buildMode,
      'ssl.version': tlsLibrary(),
      'revision.sha': build.revision,
      'revision.status': build.treeStatus,
    },
  };
}
