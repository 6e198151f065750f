// Whether a request's upgrade goes through (Envoy 1.16's createUpgradeFilterChain): a route that
// names the upgrade type decides, either way; otherwise the connection manager's upgrade_configs
// do; an upgrade neither names is refused. Pure.

import type { UpgradeSwitches } from '../../config/model';

/** @param type the request's Upgrade value, e.g. `websocket` (any case) */
export function upgradeAllowed(type: string, connectionManager: UpgradeSwitches, route: UpgradeSwitches | undefined): boolean {
  const key = type.toLowerCase();
  if (route !== undefined && Object.hasOwn(route, key)) return route[key]!;
  return Object.hasOwn(connectionManager, key) && connectionManager[key]!;
}
