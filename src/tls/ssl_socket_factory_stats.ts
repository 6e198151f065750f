// Envoy's statistics of a TLS transport socket factory (ALL_SSL_SOCKET_FACTORY_STATS in 1.16's
// ssl_socket.h), under what owns it: `cluster.<stat_name>.client_ssl_socket_factory.*`,
// `listener.<address>.server_ssl_socket_factory.*`. A worker counts the connections it could not
// secure for want of an SDS secret; the supervisor counts the contexts SDS updated.

import type { StatGroup } from '../stats/name_table';
import { StatKind } from '../shared_memory/region_layout';
import type { Counter, Scope } from '../stats/stats';

export const SSL_SOCKET_FACTORY_COUNTERS = ['ssl_context_update_by_sds', 'upstream_context_secrets_not_ready', 'downstream_context_secrets_not_ready'] as const;

export type SslSocketFactorySide = 'client' | 'server';

export class SslSocketFactoryStats {
  readonly ssl_context_update_by_sds: Counter;
  readonly upstream_context_secrets_not_ready: Counter;
  readonly downstream_context_secrets_not_ready: Counter;

  /** @param owner the scope of the cluster or listener, e.g. `cluster.<stat_name>` */
  constructor(owner: Scope, side: SslSocketFactorySide) {
    const scope = owner.scope(`${side}_ssl_socket_factory`);
    this.ssl_context_update_by_sds = scope.counter('ssl_context_update_by_sds');
    this.upstream_context_secrets_not_ready = scope.counter('upstream_context_secrets_not_ready');
    this.downstream_context_secrets_not_ready = scope.counter('downstream_context_secrets_not_ready');
  }
}

/** A cluster's `client_ssl_socket_factory.*` names, declared so that /stats lists them at 0. */
export const CLIENT_SSL_SOCKET_FACTORY_STAT_GROUP: StatGroup = {
  scope: 'client_ssl_socket_factory.',
  names: SSL_SOCKET_FACTORY_COUNTERS,
  kind: StatKind.Counter,
  flags: 0,
};
