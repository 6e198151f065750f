// Builds the access logs of one filter chain's filter (a connection manager's or tcp_proxy's
// access_log list) in a worker: the seam through which the network filters get theirs.

import type { RandomSource } from '../common/random';
import type { RuntimeSource } from '../runtime/live_runtime';
import type { AccessLog } from './access_log';
import type { AccessLogConfig } from './access_log_config';
import { createFilter } from './access_log_filter';
import type { AccessLogManager } from './access_log_manager';
import { FileAccessLog } from './file_access_log';
import { createFormatter } from './log_formatter';

export interface AccessLogContext {
  /** The process's log files: one buffered writer per path, flushed and reopened together. */
  readonly files: AccessLogManager;
  /** Read by the filters that compare against runtime values (status code, duration, runtime). */
  readonly runtime: RuntimeSource;
  /** The runtime filter's draw when the request id does not decide. */
  readonly random: RandomSource;
}

/**
 * The access logs `configs` describe (validated with the configuration), their files opened now.
 * @throws the file system's error when a file cannot be opened
 */
export function createAccessLogs(configs: readonly AccessLogConfig[], context: AccessLogContext): readonly AccessLog[] {
  return configs.map(
    (config) =>
      new FileAccessLog(
        config.filter === null ? null : createFilter(config.filter, context),
        createFormatter(config.format),
        context.files.openSync(config.path),
      ),
  );
}
