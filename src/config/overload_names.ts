// The names an overload_manager uses: its actions' (well-known strings, not extensions) and its
// triggers', which name a resource monitor. Both in Envoy's spelling or ours.

import type { OverloadActionKind } from './model';
import { proxySpelling } from './names';

const ACTION_PREFIX = 'proxy.overload_actions.';

/** The actions this build acts on, Envoy 1.16's; any other name is refused. */
export const OVERLOAD_ACTION_KINDS: readonly OverloadActionKind[] = ['stop_accepting_requests', 'disable_http_keepalive', 'stop_accepting_connections', 'shrink_heap'];

/** The action an OverloadAction.name names; undefined for one this build does not act on. */
export function overloadActionKind(name: string): OverloadActionKind | undefined {
  const spelled = proxySpelling(name);
  if (!spelled.startsWith(ACTION_PREFIX)) return undefined;
  return OVERLOAD_ACTION_KINDS.find((kind) => kind === spelled.slice(ACTION_PREFIX.length));
}

/** `proxy.overload_actions.<kind>`: the action's name in its stats. */
export function overloadActionName(kind: OverloadActionKind): string {
  return ACTION_PREFIX + kind;
}

/** The monitor a Trigger.name names, as the registry names monitors (canonicalized before validation). */
export function triggerMonitorName(name: string): string {
  return proxySpelling(name);
}
