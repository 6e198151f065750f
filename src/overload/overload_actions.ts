// What each overload action turns on or off in a worker: the data path's booleans
// (OverloadState), its listeners' accepting, and its heap shrinker.

import type { OverloadActionKind } from '../config/model';
import type { HeapShrinker } from './heap_shrinker';
import type { OverloadState } from './overload_state';

export interface OverloadActionTargets {
  readonly state: OverloadState;
  /** The worker's listeners (ListenerManager). */
  readonly listeners: { setAccepting(accepting: boolean): void };
  /** Made only when shrink_heap is configured. */
  readonly heap: HeapShrinker | null;
}

export function applyOverloadAction(targets: OverloadActionTargets, kind: OverloadActionKind, active: boolean): void {
  switch (kind) {
    case 'stop_accepting_requests':
      targets.state.stopAcceptingRequests = active;
      break;
    case 'disable_http_keepalive':
      targets.state.disableHttpKeepalive = active;
      break;
    case 'stop_accepting_connections':
      targets.listeners.setAccepting(!active);
      break;
    case 'shrink_heap':
      targets.heap?.setActive(active);
      break;
  }
}
