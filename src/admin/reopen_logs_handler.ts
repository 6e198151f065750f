// POST /reopen_logs: what SIGUSR1 does, for whoever cannot signal the process (logrotate's
// postrotate over HTTP): every access log and --log-path, in every process, is reopened.

import { AdminHandler } from './admin_server';

export function reopenLogsHandler(reopen: () => void): AdminHandler {
  return {
    path: '/reopen_logs',
    help: 'reopen access logs',
    mutatesState: true,
    decodeQuery: false,
    handle: () => {
      reopen();
      return { status: 200, body: 'OK\n' };
    },
  };
}
