// POST /drain_listeners[?graceful][?inboundonly]: the workers stop accepting on the listeners
// (only those with traffic_direction INBOUND with ?inboundonly, as Envoy), after the drain
// sequence (--drain-strategy over --drain-time-s) with ?graceful. Established connections
// carry on. Each worker counts listener_manager.listener_stopped per listener it stops.

import { AdminHandler } from './admin_server';

export interface DrainListenersRequest {
  readonly graceful: boolean;
  readonly inboundOnly: boolean;
}

export function drainListenersHandler(drain: (r: DrainListenersRequest) => void): AdminHandler {
  return {
    path: '/drain_listeners',
    help: 'drain listeners',
    mutatesState: true,
    decodeQuery: false,
    params: [
      { name: 'graceful', help: 'run the drain sequence first', kind: 'flag' },
      { name: 'inboundonly', help: 'only the listeners whose traffic_direction is INBOUND', kind: 'flag' },
    ],
    handle: (req) => {
      drain({ graceful: req.query.has('graceful'), inboundOnly: req.query.has('inboundonly') });
      return { status: 200, body: 'OK\n' };
    },
  };
}
