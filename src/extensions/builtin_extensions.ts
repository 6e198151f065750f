// The extensions this build has, each registered by one line in its category's list. Everything
// that asks which extensions exist (the configuration pipeline, --disable-extensions,
// GET /server_info, the workers' filter factories) reads the registry made here.

import { ExtensionRegistry } from '../config/extension_registry';
import type { ExtensionFactories } from './extension_factories';
import { HEALTH_CHECK_FILTER } from './http/health_check';
import { ROUTER_FILTER } from './http/router';

export type BuiltinExtensions = ExtensionRegistry<ExtensionFactories>;

export function builtinExtensions(): BuiltinExtensions {
  return new ExtensionRegistry<ExtensionFactories>({
    'proxy.access_loggers': [],
    'proxy.clusters': [],
    'proxy.filters.http': [HEALTH_CHECK_FILTER, ROUTER_FILTER],
    'proxy.filters.listener': [],
    'proxy.filters.network': [],
    'proxy.filters.upstream_network': [],
    'proxy.retry_host_predicates': [],
    'proxy.transport_sockets.downstream': [],
    'proxy.transport_sockets.upstream': [],
  });
}
