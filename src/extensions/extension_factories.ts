// What each category's runtime creates its extensions with: the `factory` of a descriptor
// (src/config/extension.ts) of that category. Each type is declared by the runtime that calls it.

import type { AccessLog } from '../access_log/access_log';
import type { AccessLogManager } from '../access_log/access_log_manager';
import type { AccessLogConfig } from '../config/model';
import type { HttpFilterFactoryCreator } from '../filters/http/http_filter_registry';

/** What an access logger may use when it is created (one per access_log entry, per worker). */
export interface AccessLoggerContext {
  /** The process's log files, shared by every logger writing to the same path. */
  readonly files: AccessLogManager;
}

export type AccessLoggerFactory = (config: AccessLogConfig, context: AccessLoggerContext) => AccessLog;

export interface ExtensionFactories {
  'proxy.access_loggers': AccessLoggerFactory;
  'proxy.clusters': unknown;
  'proxy.filters.http': HttpFilterFactoryCreator;
  'proxy.filters.listener': unknown;
  'proxy.filters.network': unknown;
  'proxy.filters.upstream_network': never;
  'proxy.retry_host_predicates': unknown;
  'proxy.transport_sockets.downstream': unknown;
  'proxy.transport_sockets.upstream': unknown;
}
