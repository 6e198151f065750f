// What each category's runtime creates its extensions with: the `factory` of a descriptor
// (src/config/extension.ts) of that category. Each type is declared by the runtime that calls it.

import type { AccessLog } from '../access_log/access_log';
import type { AccessLogManager } from '../access_log/access_log_manager';
import type { AccessLogConfig } from '../config/model';
import type { HttpFilterFactoryCreator } from '../filters/http/http_filter_registry';
import type { NetworkFilterFactoryCreator } from '../listener/network_filter_builder';
import type { ClusterType } from '../upstream/supervisor/cluster_discovery';
import type { HealthCheckerFactory } from '../upstream/supervisor/health_check/health_checkers';
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
 * transport sockets, the router the retry host predicates): no object of its own to create.
 */
export interface ExtensionFactories {
  'proxy.access_loggers': AccessLoggerFactory;
  /** The supervisor's discovery of a cluster's hosts. */
  'proxy.clusters': ClusterType;
  'proxy.filters.http': HttpFilterFactoryCreator;
  'proxy.filters.listener': null;
  'proxy.filters.network': NetworkFilterFactoryCreator;
  'proxy.filters.upstream_network': never;
  'proxy.retry_host_predicates': null;
  'proxy.transport_sockets.downstream': null;
  'proxy.transport_sockets.upstream': null;
  'proxy.load_balancers': LoadBalancerFactory;
  /** The supervisor's probes of one kind of active health check. */
  'proxy.health_checkers': HealthCheckerFactory;
}
