// Builds the access logs of one filter (a connection manager's or tcp_proxy's access_log list)
// in a worker: each entry's logger by its registered factory, behind the entry's filter, as
// Envoy's AccessLogFactory::fromProto does.

import type { RandomSource } from '../common/random';
import type { AccessLoggerContext, AccessLoggerFactory } from '../extensions/data_plane_factories';
import type { RequestHead, ResponseHead } from '../http/message';
import type { RuntimeSource } from '../runtime/live_runtime';
import type { StreamInfo } from '../stream_info/stream_info';
import type { AccessLog } from './access_log';
import type { AccessLogEntryConfig } from './access_log_config';
import { type AccessLogFilter, createFilter } from './access_log_filter';

export interface AccessLogsContext extends AccessLoggerContext {
  /** The access loggers' factories by registered name: registry.factories('proxy.access_loggers'). */
  readonly loggers: ReadonlyMap<string, AccessLoggerFactory>;
  /** Read by the filters that compare against runtime values (status code, duration, runtime). */
  readonly runtime: RuntimeSource;
  /** The runtime filter's draw when the request id does not decide. */
  readonly random: RandomSource;
}

/**
 * The access logs `entries` describe (validated with the configuration), their files opened now.
 * @throws the file system's error when a file cannot be opened
 */
export function createAccessLogs(entries: readonly AccessLogEntryConfig[], context: AccessLogsContext): readonly AccessLog[] {
  return entries.map((entry) => {
    const factory = context.loggers.get(entry.logger.name);
    // Validation admits registered loggers only.
    if (factory === undefined) throw new Error(`no access logger is named '${entry.logger.name}'`);
    const logger = factory(entry.logger, context);
    return entry.filter === null ? logger : new FilteredAccessLog(createFilter(entry.filter, context), logger);
  });
}

class FilteredAccessLog implements AccessLog {
  constructor(
    private readonly filter: AccessLogFilter,
    private readonly logger: AccessLog,
  ) {}

  log(request: RequestHead | null, response: ResponseHead | null, trailers: readonly string[] | null, info: StreamInfo): void {
    if (this.filter.evaluate({ request, response, trailers, info })) this.logger.log(request, response, trailers, info);
  }
}
