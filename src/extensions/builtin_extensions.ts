// The extensions this build has, each registered by one line in its category's list (the
// workers' filters and access loggers in data_plane_extensions.ts). Everything that asks which
// extensions exist (the configuration pipeline, --disable-extensions, GET /server_info, the
// supervisor's cluster types and stats sinks) reads the registry made here.

import { ExtensionRegistry } from '../config/extension_registry';
import { AGGREGATE } from './clusters/aggregate';
import { EDS, LOGICAL_DNS, ORIGINAL_DST, STATIC, STRICT_DNS } from './clusters/discovery_types';
import { accessLoggers, httpFilters, networkFilters, resourceMonitors, tracers } from './data_plane_extensions';
import type { ExtensionFactories } from './extension_factories';
import { GRPC_HEALTH_CHECKER } from './health_checkers/grpc';
import { HTTP_HEALTH_CHECKER } from './health_checkers/http';
import { TCP_HEALTH_CHECKER } from './health_checkers/tcp';
import { ORIGINAL_DST_FILTER } from './listener/original_dst';
import { TLS_INSPECTOR_FILTER } from './listener/tls_inspector';
import { ALLOW_LISTED_ROUTES_PREDICATE } from './internal_redirect/allow_listed_routes';
import { PREVIOUS_ROUTES_PREDICATE } from './internal_redirect/previous_routes';
import { SAFE_CROSS_SCHEME_PREDICATE } from './internal_redirect/safe_cross_scheme';
import { loadBalancers } from './load_balancers';
import { PREVIOUS_HOSTS_PREDICATE } from './retry/previous_hosts';
import { DOG_STATSD } from './stat_sinks/dog_statsd';
import { METRICS_SERVICE } from './stat_sinks/metrics_service';
import { STATSD } from './stat_sinks/statsd';
import { DOWNSTREAM_RAW_BUFFER, UPSTREAM_RAW_BUFFER } from './transport_sockets/raw_buffer';
import { DOWNSTREAM_TLS, UPSTREAM_TLS } from './transport_sockets/tls';
import { UPSTREAM_PROXY_PROTOCOL } from './transport_sockets/upstream_proxy_protocol';

export type BuiltinExtensions = ExtensionRegistry<ExtensionFactories>;

export function builtinExtensions(): BuiltinExtensions {
  return new ExtensionRegistry<ExtensionFactories>({
    'proxy.access_loggers': accessLoggers(),
    'proxy.clusters': [STATIC, STRICT_DNS, LOGICAL_DNS, EDS, ORIGINAL_DST, AGGREGATE],
    'proxy.filters.http': httpFilters(),
    'proxy.filters.listener': [ORIGINAL_DST_FILTER, TLS_INSPECTOR_FILTER],
    'proxy.filters.network': networkFilters(),
    'proxy.filters.upstream_network': [],
    'proxy.retry_host_predicates': [PREVIOUS_HOSTS_PREDICATE],
    'proxy.internal_redirect_predicates': [ALLOW_LISTED_ROUTES_PREDICATE, PREVIOUS_ROUTES_PREDICATE, SAFE_CROSS_SCHEME_PREDICATE],
    'proxy.transport_sockets.downstream': [DOWNSTREAM_RAW_BUFFER, DOWNSTREAM_TLS],
    'proxy.transport_sockets.upstream': [UPSTREAM_RAW_BUFFER, UPSTREAM_TLS, UPSTREAM_PROXY_PROTOCOL],
    'proxy.load_balancers': loadBalancers(),
    'proxy.health_checkers': [HTTP_HEALTH_CHECKER, TCP_HEALTH_CHECKER, GRPC_HEALTH_CHECKER],
    'proxy.resource_monitors': resourceMonitors(),
    'proxy.stats_sinks': [STATSD, DOG_STATSD, METRICS_SERVICE],
    'proxy.tracers': tracers(),
  });
}
