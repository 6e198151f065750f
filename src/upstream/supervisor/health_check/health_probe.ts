// What one host's checker does on the wire, whatever the protocol: run a check and report its
// outcome once, or abandon it when it times out. The session (health_check_session.ts) owns the
// timing; a probe owns its connection, kept between checks when reuse_connection says so.

import type { SocketAddress } from '../../../config/model';
import type { Connector } from '../../../network/connector';
import type { CheckOutcome } from './verdict';

export interface HealthProbe {
  /** Starts a check; `done` is called once with its outcome, unless abort() or close() comes first. */
  check(done: (outcome: CheckOutcome) => void): void;
  /** The check timed out: forget it and close the connection. */
  abort(): void;
  /** The host left or the checker stopped. */
  close(): void;
}

/**
 * Where a probe connects: the host's address, through the transport socket its cluster picks for
 * it (TLS included, as Envoy's health checkers use the cluster's transport socket).
 */
export interface ProbeTarget {
  readonly address: SocketAddress;
  readonly connector: Connector;
}

/** Makes the probe of a host. */
export type ProbeFactory = (target: ProbeTarget) => HealthProbe;

export const NETWORK_FAILURE: CheckOutcome = { kind: 'failure', type: 'NETWORK' };
export const ACTIVE_FAILURE: CheckOutcome = { kind: 'failure', type: 'ACTIVE' };
export const HEALTHY: CheckOutcome = { kind: 'success', degraded: false };
