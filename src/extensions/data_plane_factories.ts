// What each category whose extensions act in the workers creates them with: the `factory` of a
// descriptor (src/config/extension.ts) of that category, declared by the runtime that calls it.
// Apart from the supervisor's categories (extension_factories.ts), so that a worker's code names
// none of the supervisor's types.

import type { AccessLog } from '../access_log/access_log';
import type { AccessLogManager } from '../access_log/access_log_manager';
import type { AccessLogConfig } from '../config/model';
import type { HttpFilterFactoryCreator } from '../filters/http/http_filter_registry';
import type { NetworkFilterFactoryCreator } from '../listener/network_filter_builder';
import type { ResourceMonitorFactory } from '../overload/resource_monitor';
import type { TracerFactory } from '../tracing/tracer';
import type { LoadBalancerFactory } from '../upstream/worker/lb/load_balancer_registry';

/** What an access logger may use when it is created (one per access_log entry, per worker). */
export interface AccessLoggerContext {
  /** The process's log files, shared by every logger writing to the same path. */
  readonly files: AccessLogManager;
}

export type AccessLoggerFactory = (config: AccessLogConfig, context: AccessLoggerContext) => AccessLog;

/**
 * Each category's factory type. null: the runtime acts on the extension's model by its kind (the
 * listener's FilterChainManager runs the listener filters, the TLS code and the connectors the
 * transport sockets, the router the retry host predicates and the internal redirect predicates): no object of its own to create.
 */
export interface DataPlaneFactories {
  'proxy.access_loggers': AccessLoggerFactory;
  'proxy.filters.http': HttpFilterFactoryCreator;
  'proxy.filters.listener': null;
  'proxy.filters.network': NetworkFilterFactoryCreator;
  'proxy.filters.upstream_network': never;
  'proxy.retry_host_predicates': null;
  'proxy.internal_redirect_predicates': null;
  'proxy.transport_sockets.downstream': null;
  'proxy.transport_sockets.upstream': null;
  'proxy.load_balancers': LoadBalancerFactory;
  'proxy.resource_monitors': ResourceMonitorFactory;
  'proxy.tracers': TracerFactory;
}
