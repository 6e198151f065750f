// What one extension is, declared once (its descriptor): its names, its category, the type of
// its typed_config, the fields of that config this build acts on (its Shape), its validation,
// its model and the factory of what runs it. The configuration pipeline (name lookup, the
// capability check, validation, the model), --disable-extensions, GET /server_info and the
// runtime's factories all read descriptors from the registry they are handed
// (extension_registry.ts); none of them lists extensions of its own.
//
// How to add an extension:
//   1. Write its descriptor in a file of its own under src/extensions/<category>/ (see
//      src/extensions/http/health_check.ts): `export const X: ExtensionDescriptor<'<category>',
//      DataPlaneFactories['<category>']> = { ... }` (ExtensionFactories for the supervisor's).
//   2. Add X to its category's list (one line): in src/extensions/data_plane_extensions.ts for
//      what the workers create (HTTP filters, network filters, access loggers), else in
//      src/extensions/builtin_extensions.ts.
// An HTTP filter that reads a configuration of its own per virtual host, route or weighted
// cluster (typed_per_filter_config) declares it in its descriptor too: `perRoute` (the type, the
// shape, the rules and the model of that configuration, as for its typed_config), its model
// type in PerRouteModels (model.ts); the filter finds it with mostSpecificPerFilterConfig
// (src/filters/http/per_filter_config.ts).
// A new category also needs its model type in ExtensionModels below, its factory type in
// src/extensions/data_plane_factories.ts (extension_factories.ts for the supervisor's), a list,
// and the places of a bootstrap it is configured at (extension_sites.ts) when the pipeline is to
// find it. docs/architecture/extensions.md.
//
// This module is the configuration layer's side: it imports no runtime code, so src/config
// never depends on what it configures (src/upstream, src/filters, ...); the registry and the
// factories are built above both (src/extensions) and handed down.

import type { ConfigSourceContext } from './validation/config_sources';
import type { JsonObject } from './json';
import type {
  AccessLogConfig,
  ClusterTypeConfig,
  DownstreamTransportSocketConfig,
  HealthChecker,
  HttpFilterConfig,
  InternalRedirectPredicateConfig,
  LbPolicy,
  ListenerFilterConfig,
  NetworkFilterConfig,
  PerRouteModel,
  ResourceMonitorConfig,
  RetryHostPredicateConfig,
  StatsSinkConfig,
  TracerConfig,
  TransportSocketConfig,
} from './model';
import type { ExtensionRegistry } from './extension_registry';
import type { Shape } from './shape';

/** The model an extension of each category builds; the keys are the categories (Envoy's, in our spelling). */
export interface ExtensionModels {
  /** At `access_log[]` of the HTTP connection manager and the TCP proxy. */
  'proxy.access_loggers': AccessLogConfig;
  /** A cluster's discovery type (`type`) or custom type (`cluster_type`). */
  'proxy.clusters': ClusterTypeConfig;
  'proxy.filters.http': HttpFilterConfig;
  'proxy.filters.listener': ListenerFilterConfig;
  'proxy.filters.network': NetworkFilterConfig;
  /** A cluster's `filters`: Envoy 1.16 registers none, nor does this build. */
  'proxy.filters.upstream_network': never;
  'proxy.retry_host_predicates': RetryHostPredicateConfig;
  /** A route's internal_redirect_policy.predicates. */
  'proxy.internal_redirect_predicates': InternalRedirectPredicateConfig;
  'proxy.transport_sockets.downstream': DownstreamTransportSocketConfig;
  'proxy.transport_sockets.upstream': TransportSocketConfig;
  /** A cluster's lb_policy (the config of a policy is one of the Cluster's own fields). */
  'proxy.load_balancers': LbPolicy;
  /** An active health check's kind, by the HealthCheck field that configures it (http_health_check, ...). */
  'proxy.health_checkers': HealthChecker;
  /** overload_manager.resource_monitors, which every worker reads for itself. */
  'proxy.resource_monitors': ResourceMonitorConfig;
  /** The bootstrap's stats_sinks, which the supervisor flushes. */
  'proxy.stats_sinks': StatsSinkConfig;
  /** Bootstrap.tracing.http, and a connection manager's tracing.provider. */
  'proxy.tracers': TracerConfig;
}

export type ExtensionCategory = keyof ExtensionModels;

/**
 * Categories that are no part of Envoy 1.16's extension registry (lb_policy is an enum there, and
 * the built-in health checks are fields of HealthCheck), so GET /server_info lists none of them
 * and --disable-extensions cannot name them. Their descriptors are named as the configuration
 * selects them: `ROUND_ROBIN`, `http_health_check`.
 */
export const UNLISTED_CATEGORIES: ReadonlySet<ExtensionCategory> = new Set(['proxy.load_balancers', 'proxy.health_checkers']);

/** Any factory per category: what the configuration layer sees of a registry. */
export type AnyFactories = { readonly [C in ExtensionCategory]: unknown };

/** The registry as the configuration pipeline reads it (it never calls a factory). */
export type ConfigExtensions = ExtensionRegistry<AnyFactories>;

export interface ValidationContext {
  /** The names of the static clusters, which filters may route to. */
  readonly clusters: ReadonlySet<string>;
  /**
   * Of those, the ones without a transport socket: what a connection the proxy opens in
   * plaintext itself (a stats sink's) may go to.
   */
  readonly plaintextClusters: ReadonlySet<string>;
  /** For an extension that holds others (the connection manager's HTTP filters). */
  readonly extensions: ConfigExtensions;
  /** What a config source it holds may name (a connection manager's `rds`). */
  readonly configSources: ConfigSourceContext;
}

export interface ModelContext {
  /** For an extension that holds others (the connection manager's HTTP filters). */
  readonly extensions: ConfigExtensions;
}

/**
 * One extension. `Factory` is what its category's runtime creates it with
 * (src/extensions/extension_factories.ts); the configuration layer leaves it opaque.
 */
export interface ExtensionDescriptor<C extends ExtensionCategory, Factory = unknown> {
  readonly category: C;
  /** Its name in our spelling (`proxy.filters.http.health_check`); the `envoy.` spelling is accepted as well. */
  readonly name: string;
  /** Other names Envoy 1.16 configures it by: legacy names such as `envoy.health_check`. */
  readonly aliases?: readonly string[];
  /**
   * The v3 message type of its typed_config, in Envoy's package (an extension configured by a
   * type URL alone is found by it); null when it takes none. A v2 or `proxy.` type URL arrives
   * renamed to this (ProtoSchema.v3TypeName), so one name covers every spelling Envoy accepts.
   */
  readonly configType: string | null;
  /** The fields of its typed_config this build acts on: the capability check refuses others by path. */
  readonly shape: Shape;
  /**
   * What the protos cannot say (their rules are checked before) of its typed_config at `path`
   * (`{}` when unset, which means "all defaults").
   * @throws FieldError
   */
  validate?(config: JsonObject, path: string, context: ValidationContext): void;
  /** Its model from its validated typed_config (`{}` when unset), Envoy's defaults filled in. */
  model(config: JsonObject, context: ModelContext): ExtensionModels[C];
  /** What creates its runtime object (a filter factory, a cluster's discovery, ...). */
  readonly factory: Factory;
  /** An HTTP filter's configuration per virtual host, route or weighted cluster; absent: it takes none there. */
  readonly perRoute?: C extends 'proxy.filters.http' ? PerRouteConfigDescriptor : never;
}

/** What an HTTP filter reads from a typed_per_filter_config entry named for it. */
export interface PerRouteConfigDescriptor {
  /** The v3 message type the entry's Any must be (Envoy's createEmptyRouteConfigProto). */
  readonly configType: string;
  /** Its fields this build acts on. */
  readonly shape: Shape;
  /**
   * What the protos cannot say of the entry at `path` (`{}` for an Any without a value).
   * @throws FieldError
   */
  validate?(config: JsonObject, path: string, context: ValidationContext): void;
  /** Its model from the validated entry, Envoy's defaults filled in. */
  model(config: JsonObject): PerRouteModel;
}
