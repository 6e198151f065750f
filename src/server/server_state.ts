// The server's lifecycle state as admin reports it (Envoy's ServerState and its enum numbers,
// which the server.state gauge carries).

export type ServerState = 'LIVE' | 'DRAINING' | 'PRE_INITIALIZING' | 'INITIALIZING';

export const SERVER_STATE_GAUGE: Readonly<Record<ServerState, number>> = {
  LIVE: 0,
  DRAINING: 1,
  PRE_INITIALIZING: 2,
  INITIALIZING: 3,
};

/** The fields of GET /server_info's line that change while the server runs. */
export interface ServerInfoSource {
  state(): ServerState;
  /** Seconds since this epoch started. */
  uptimeCurrentEpoch(): number;
  /** Seconds since epoch 0 started (learned from the shared region). */
  uptimeAllEpochs(): number;
  readonly restartEpoch: number;
}

/**
 * The spec's one line of six fields: process name, revision/build type, `live` or `draining`,
 * uptime of this epoch, total uptime, epoch.
 */
export function renderServerInfoLine(revision: string, buildMode: string, s: ServerInfoSource): string {
  const health = s.state() === 'DRAINING' ? 'draining' : 'live';
  return `proxy ${revision}/${buildMode} ${health} ${s.uptimeCurrentEpoch()} ${s.uptimeAllEpochs()} ${s.restartEpoch}\n`;
}
