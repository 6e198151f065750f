// POST /healthcheck/fail and /healthcheck/ok: the server fails (or passes again) its inbound
// health checks. The supervisor keeps the state; its workers' health check filters and drain
// managers follow it.

import { AdminHandler } from './admin_server';

export function healthCheckHandlers(setHealthCheckFailed: (failed: boolean) => void): AdminHandler[] {
  const handler = (path: string, help: string, failed: boolean): AdminHandler => ({
    path,
    help,
    mutatesState: true,
    decodeQuery: false,
    handle: () => {
      setHealthCheckFailed(failed);
      return { status: 200, body: 'OK\n' };
    },
  });
  return [
    handler('/healthcheck/fail', 'cause the server to fail health checks', true),
    handler('/healthcheck/ok', 'cause the server to pass health checks', false),
  ];
}
