// A worker's upstream connection loggers, each taken for the file that writes with it once,
// when the cluster manager is built, so no pool or connection resolves a file logger.

import type { ConnectionIds, UpstreamConnectionLogs } from '../log/connection_log';
import type { LoggerFactory } from '../log/logger_api';
import { http1ClientLog } from './http1_client_connection';
import { http1PoolLog } from './http1_pool';
import { http2ClientLog } from './http2_client_connection';
import { http2PoolLog } from './http2_pool';
import { upstreamConnectionLog } from './upstream_connection';

export function upstreamConnectionLogs(ids: ConnectionIds, log: LoggerFactory): UpstreamConnectionLogs {
  const pool = log('pool');
  const client = log('client');
  return {
    ids,
    connection: upstreamConnectionLog(log('connection')),
    http1Pool: http1PoolLog(pool),
    http2Pool: http2PoolLog(pool),
    http1Client: http1ClientLog(client),
    http2Client: http2ClientLog(client),
  };
}
