// The extensions whose factories the workers call: the filters a listener runs, the tracers
// its connection managers report spans with and the overload manager's resource monitors. Registered here
// (one line each) and, through builtin_extensions.ts, with everything else; a worker reads only
// this module, so that it loads none of the supervisor's discovery code (DNS, xDS). Each
// descriptor requires its runtime inside its factory: a process loads the code of the filters its
// configuration uses, not of every filter registered (module loading is most of a start).

import type { ExtensionDescriptor } from '../config/extension';
import type { HttpFilterFactoryCreator } from '../filters/http/http_filter_registry';
import type { NetworkFilterFactoryCreator } from '../listener/network_filter_builder';
import type { ResourceMonitorFactory } from '../overload/resource_monitor';
import type { TracerFactory } from '../tracing/tracer';
import type { AccessLoggerFactory, DataPlaneFactories } from './data_plane_factories';
import { FILE_ACCESS_LOGGER } from './access_loggers/file';
import { BUFFER_FILTER } from './http/buffer';
import { COMPRESSOR_FILTER } from './http/compressor';
import { CORS_FILTER } from './http/cors';
import { CSRF_FILTER } from './http/csrf';
import { EXT_AUTHZ_FILTER } from './http/ext_authz';
import { FAULT_FILTER } from './http/fault';
import { GRPC_HTTP1_BRIDGE_FILTER } from './http/grpc_http1_bridge';
import { GRPC_WEB_FILTER } from './http/grpc_web';
import { GZIP_FILTER } from './http/gzip';
import { HEALTH_CHECK_FILTER } from './http/health_check';
import { LOCAL_RATELIMIT_FILTER } from './http/local_ratelimit';
import { RATELIMIT_FILTER } from './http/ratelimit';
import { ROUTER_FILTER } from './http/router';
import { HTTP_CONNECTION_MANAGER_FILTER } from './network/http_connection_manager/descriptor';
import { TCP_PROXY_FILTER } from './network/tcp_proxy';
import { FIXED_HEAP } from './resource_monitors/fixed_heap';
import { INJECTED_RESOURCE } from './resource_monitors/injected_resource';
import { ZIPKIN } from './tracers/zipkin';

type Descriptors<C extends 'proxy.access_loggers' | 'proxy.filters.http' | 'proxy.filters.network' | 'proxy.tracers' | 'proxy.resource_monitors'> = readonly ExtensionDescriptor<C, DataPlaneFactories[C]>[];

export function accessLoggers(): Descriptors<'proxy.access_loggers'> {
  return [FILE_ACCESS_LOGGER];
}

export function httpFilters(): Descriptors<'proxy.filters.http'> {
  return [
    HEALTH_CHECK_FILTER,
    CORS_FILTER,
    FAULT_FILTER,
    CSRF_FILTER,
    LOCAL_RATELIMIT_FILTER,
    COMPRESSOR_FILTER,
    GZIP_FILTER,
    BUFFER_FILTER,
    GRPC_WEB_FILTER,
    GRPC_HTTP1_BRIDGE_FILTER,
    RATELIMIT_FILTER,
    EXT_AUTHZ_FILTER,
    ROUTER_FILTER,
  ];
}

/** In the order a chain's error names its terminal filters. */
export function networkFilters(): Descriptors<'proxy.filters.network'> {
  return [TCP_PROXY_FILTER, HTTP_CONNECTION_MANAGER_FILTER];
}

export function tracers(): Descriptors<'proxy.tracers'> {
  return [ZIPKIN];
}

/** The overload manager's monitors, which each worker runs for itself. */
export function resourceMonitors(): Descriptors<'proxy.resource_monitors'> {
  return [FIXED_HEAP, INJECTED_RESOURCE];
}

/** The filter factories a worker's NetworkFilterBuilder takes, and its tracers' factories, by extension name. */
export function dataPlaneFactories(): {
  readonly httpFilters: ReadonlyMap<string, HttpFilterFactoryCreator>;
  readonly networkFilters: ReadonlyMap<string, NetworkFilterFactoryCreator>;
  readonly accessLoggers: ReadonlyMap<string, AccessLoggerFactory>;
  readonly tracers: ReadonlyMap<string, TracerFactory>;
  readonly resourceMonitors: ReadonlyMap<string, ResourceMonitorFactory>;
} {
  return {
    httpFilters: byName(httpFilters()),
    networkFilters: byName(networkFilters()),
    accessLoggers: byName(accessLoggers()),
    tracers: byName(tracers()),
    resourceMonitors: byName(resourceMonitors()),
  };
}

function byName<F>(descriptors: readonly { readonly name: string; readonly factory: F }[]): ReadonlyMap<string, F> {
  return new Map(descriptors.map((d) => [d.name, d.factory]));
}
