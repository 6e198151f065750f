// What this build runs: the last stage of loading (load.ts, cluster_resource.ts) refuses, by
// field path, whatever the proxy would decode and then ignore (health checks that never run, a
// TLS context that would silently be plaintext), in --mode validate as when serving. The
// bootstrap's core messages declare their fields here, each extension the fields of its
// typed_config in its descriptor (shape.ts, extension.ts). Pure: the decoded v3 bootstrap in,
// FieldError out.

import { CERTIFICATE_VALIDATION_CONTEXT, GRPC_SERVICE, HTTP2_PROTOCOL_OPTIONS, STRING_MATCHER, TLS_CERTIFICATE } from './common_shapes';
import type { ConfigExtensions } from './extension';
import { discoveryTypeOf } from './extension_registry';
import { FieldError, FieldErrorCollector } from './errors';
import { keyPath } from './field_path';
import { isJsonObject, JsonObject } from './json';
import { PROTOCOL_OPTIONS_TYPES } from './names';
import { anyContent, checkShape, leaf, list, refused, Shape } from './shape';

// core.v3.ApiConfigSource as the xDS client runs it (src/config/xds): state-of-the-world and
// delta gRPC, and REST polling. Refused: rate_limit_settings, the api_types that came after
// Envoy 1.16 (AGGREGATED_*), the legacy REST value, and what GRPC_SERVICE refuses.
const API_CONFIG_SOURCE: Shape = {
  fields: {
    api_type: leaf,
    transport_api_version: leaf,
    grpc_services: list(GRPC_SERVICE),
    cluster_names: leaf,
    refresh_delay: leaf,
    request_timeout: leaf,
    set_node_on_first_message_only: leaf,
  },
  values: { api_type: ['GRPC', 'REST', 'DELTA_GRPC'] },
};

// core.v3.ConfigSource: a file, a management server (api_config_source) or the ADS stream.
export const CONFIG_SOURCE: Shape = {
  fields: { path: leaf, initial_fetch_timeout: leaf, resource_api_version: leaf, api_config_source: API_CONFIG_SOURCE, ads: { fields: {} } },
};

const SOCKET_ADDRESS: Shape = { fields: { socket_address: { fields: { address: leaf, port_value: leaf } } } };
const LOCALITY: Shape = { fields: { region: leaf, zone: leaf, sub_zone: leaf } };
// Metadata is information for filters and logs, never an instruction: any content is fine.
const METADATA = leaf;

// The static load_assignment and EDS's ClusterLoadAssignment alike. The policy: the balancers'
// overprovisioning factor, the router's drop_overloads, EDS's endpoint_stale_after (validation
// refuses it elsewhere); weighted_priority_health came after 1.16 and stays refused.
const LOAD_ASSIGNMENT: Shape = {
  fields: {
    cluster_name: leaf,
    policy: {
      fields: {
        drop_overloads: list({ fields: { category: leaf, drop_percentage: { fields: { numerator: leaf, denominator: leaf } } } }),
        overprovisioning_factor: leaf,
        endpoint_stale_after: leaf,
      },
    },
    endpoints: list({
      fields: {
        locality: LOCALITY,
        priority: leaf,
        load_balancing_weight: leaf,
        lb_endpoints: list({
          fields: {
            endpoint: { fields: { address: SOCKET_ADDRESS, hostname: leaf } },
            health_status: leaf,
            load_balancing_weight: leaf,
            metadata: METADATA,
          },
        }),
      },
    }),
  },
};

// typed_config is checked by its @type: the shape of the socket's descriptor.
const UPSTREAM_TRANSPORT_SOCKET: Shape = { fields: { name: leaf, typed_config: anyContent } };

// Active health checking (src/upstream/supervisor/health_check). Refused: custom checkers, the
// event service, tls_options, alt_port. The checks' own fields (http_health_check, ...) are their
// descriptors' (healthCheckShape).
const HEALTH_CHECK_CONFIG: Shape = {
  fields: {
    timeout: leaf,
    interval: leaf,
    initial_jitter: leaf,
    interval_jitter: leaf,
    interval_jitter_percent: leaf,
    unhealthy_threshold: leaf,
    healthy_threshold: leaf,
    reuse_connection: leaf,
    no_traffic_interval: leaf,
    unhealthy_interval: leaf,
    unhealthy_edge_interval: leaf,
    healthy_edge_interval: leaf,
    event_log_path: leaf,
    always_log_health_check_failures: leaf,
    // Checks connect through the cluster's transport sockets; the criteria pick one of its matches.
    transport_socket_match_criteria: leaf,
  },
};

/** A HealthCheck with the fields of the registry's checkers. */
function healthCheckShape(extensions: ConfigExtensions): Shape {
  const checkers = extensions.of('proxy.health_checkers').map((checker) => [checker.name, checker.shape]);
  return { fields: { ...HEALTH_CHECK_CONFIG.fields, ...Object.fromEntries(checkers) } };
}

// Envoy 1.16 applies these to the server side only and ignores them on a cluster's upstream
// connections: refused there, since a setting that does nothing is a mistake to report.
const DOWNSTREAM_ONLY = 'acts on requests from downstream clients only; Envoy ignores it on a cluster (it would be ignored)';

/**
 * typed_extension_protocol_options: Envoy 1.16 hands each entry to the network or HTTP filter of
 * that name, and only thrift_proxy and redis_proxy take any; this build has neither.
 */
function checkExtensionProtocolOptions(value: unknown, path: string, extensions: ConfigExtensions): void {
  if (!isJsonObject(value)) return;
  const errors = new FieldErrorCollector();
  for (const name of Object.keys(value)) {
    errors.run(() => {
      const canonical = extensions.canonicalName(name);
      if (!PROTOCOL_OPTIONS_TYPES.has(canonical)) {
        throw new FieldError(keyPath(path, name), `Didn't find a registered network or http filter or protocol options implementation for name: '${name}'`);
      }
      throw new FieldError(keyPath(path, name), `protocol options for ${canonical}, a filter this build does not have (it would be ignored)`);
    });
  }
  errors.throwIfAny();
}

// Every other Cluster field is carried into the model but refused here until something acts
// on it (docs/clusters.md lists each field's status). `hosts` and `tls_context` are v2 fields
// the upgrade turned into load_assignment and transport_socket, checked as those.
// typed_extension_protocol_options (whose names the registry resolves) and health_checks (whose
// checkers are the registry's) are clusterShape's.
const CLUSTER: Shape = {
  fields: {
    name: leaf,
    // idle_timeout and max_connection_duration are the pools' (http1_client_connection.ts,
    // http2_client_connection.ts), max_headers_count the codecs', max_stream_duration the router's.
    common_http_protocol_options: {
      fields: {
        idle_timeout: leaf,
        max_connection_duration: leaf,
        max_headers_count: leaf,
        max_stream_duration: leaf,
        headers_with_underscores_action: refused(DOWNSTREAM_ONLY),
      },
    },
    // header_key_format spells the request header names the HTTP/1 codec writes.
    http_protocol_options: {
      fields: {
        header_key_format: { fields: { proper_case_words: { fields: {} } } },
        enable_trailers: leaf,
        accept_http_10: refused(DOWNSTREAM_ONLY),
        default_host_for_http_10: refused(DOWNSTREAM_ONLY),
      },
    },
    http2_protocol_options: HTTP2_PROTOCOL_OPTIONS,
    protocol_selection: leaf,
    alt_stat_name: leaf,
    type: leaf,
    // Validation admits the registered names only; typed_config is checked by its @type.
    cluster_type: { fields: { name: leaf, typed_config: anyContent } },
    connect_timeout: leaf,
    per_connection_buffer_limit_bytes: leaf,
    lb_policy: leaf,
    load_assignment: LOAD_ASSIGNMENT,
    // EDS (eds_cluster.ts); service_name defaults to the cluster's name.
    eds_cluster_config: { fields: { eds_config: CONFIG_SOURCE, service_name: leaf } },
    max_requests_per_connection: leaf,
    // Acts on verdicts of health checking and outlier detection; without either it never fires, as in Envoy.
    close_connections_on_host_health_failure: leaf,
    metadata: METADATA,
    upstream_bind_config: { fields: { source_address: { fields: { address: leaf, port_value: leaf } } } },
    upstream_connection_options: {
      fields: { tcp_keepalive: { fields: { keepalive_probes: leaf, keepalive_time: leaf, keepalive_interval: leaf } } },
    },
    // ignore_new_hosts_until_first_hc keeps hosts pending their first health check out of the
    // balancers' arithmetic (priority_set.ts); without health checks it has no effect, as specified.
    // zone_aware_lb_config acts with cluster_manager.local_cluster_name, and without it as in
    // Envoy: fail_traffic_on_panic alone.
    common_lb_config: {
      fields: {
        close_connections_on_host_set_change: leaf,
        // Held health, weight and metadata changes for every cluster type (update_merge_window.ts).
        update_merge_window: leaf,
        healthy_panic_threshold: leaf,
        ignore_new_hosts_until_first_hc: leaf,
        zone_aware_lb_config: { fields: { routing_enabled: leaf, min_cluster_size: leaf, fail_traffic_on_panic: leaf } },
        locality_weighted_lb_config: { fields: {} },
        // hash_balance_factor (bounded loads) is newer than 1.16 and stays refused.
        consistent_hashing_lb_config: { fields: { use_hostname_for_hashing: leaf } },
      },
    },
    ring_hash_lb_config: { fields: { minimum_ring_size: leaf, maximum_ring_size: leaf, hash_function: leaf } },
    maglev_lb_config: { fields: { table_size: leaf } },
    track_timeout_budgets: leaf,
    // Enforced by the HTTP/1 and HTTP/2 pools and tcp_proxy, for all workers together (resource_manager.ts).
    circuit_breakers: {
      fields: {
        thresholds: list({
          fields: {
            priority: leaf,
            max_connections: leaf,
            max_pending_requests: leaf,
            max_requests: leaf,
            max_retries: leaf,
            max_connection_pools: leaf,
            track_remaining: leaf,
            retry_budget: { fields: { budget_percent: leaf, min_retry_concurrency: leaf } },
          },
        }),
      },
    },
    transport_socket: UPSTREAM_TRANSPORT_SOCKET,
    // A match entry without transport_socket is plaintext.
    transport_socket_matches: list({ fields: { name: leaf, match: leaf, transport_socket: UPSTREAM_TRANSPORT_SOCKET } }),
    // Both of 1.16's fields, which the router turns into transport socket options (cluster_info.ts).
    upstream_http_protocol_options: { fields: { auto_sni: leaf, auto_san_validation: leaf } },
    // With health checks, a healthy host discovery dropped stays until it fails (membership.ts);
    // this removes it at once. Without health checks, removal is immediate either way.
    ignore_health_on_host_removal: leaf,
    // The subset balancer (subset_load_balancer.ts). single_host_per_subset came after 1.16 and
    // stays refused.
    lb_subset_config: {
      fields: {
        fallback_policy: leaf,
        default_subset: leaf,
        subset_selectors: list({ fields: { keys: leaf, fallback_policy: leaf, fallback_keys_subset: leaf } }),
        locality_weight_aware: leaf,
        scale_locality_weight: leaf,
        panic_mode_any: leaf,
        list_as_any: leaf,
      },
    },
    // slow_start_config is newer than 1.16 and stays refused.
    least_request_lb_config: { fields: { choice_count: leaf, active_request_bias: { fields: { default_value: leaf, runtime_key: leaf } } } },
    // ORIGINAL_DST's balancer (original_dst_lb.ts) reads it; other types' balancers never do, and
    // validation refuses it beside any lb_policy but CLUSTER_PROVIDED.
    original_dst_lb_config: { fields: { use_http_header: leaf } },
    filters: list({ fields: { name: leaf, typed_config: anyContent } }),
    // The spec: DNS settings are ignored for STATIC clusters, cleanup_interval for all but
    // ORIGINAL_DST (original_dst_cluster.ts sweeps with it); ignoring them there is the
    // specified behavior, not a gap.
    dns_refresh_rate: leaf,
    dns_failure_refresh_rate: leaf,
    respect_dns_ttl: leaf,
    dns_lookup_family: leaf,
    dns_resolvers: leaf,
    use_tcp_for_dns_lookups: leaf,
    cleanup_interval: leaf,
    // Envoy 1.16's fields; later ones (max_ejection_time, ...) stay refused.
    outlier_detection: {
      fields: Object.fromEntries(
        [
          'consecutive_5xx',
          'interval',
          'base_ejection_time',
          'max_ejection_percent',
          'enforcing_consecutive_5xx',
          'enforcing_success_rate',
          'success_rate_minimum_hosts',
          'success_rate_request_volume',
          'success_rate_stdev_factor',
          'consecutive_gateway_failure',
          'enforcing_consecutive_gateway_failure',
          'split_external_local_origin_errors',
          'consecutive_local_origin_failure',
          'enforcing_consecutive_local_origin_failure',
          'enforcing_local_origin_success_rate',
          'failure_percentage_threshold',
          'enforcing_failure_percentage',
          'enforcing_failure_percentage_local_origin',
          'failure_percentage_minimum_hosts',
          'failure_percentage_request_volume',
        ].map((field) => [field, leaf]),
      ),
    },
  },
};

/** The Cluster message: its types and load balancing policies are the registry's. */
function clusterShape(extensions: ConfigExtensions): Shape {
  return {
    fields: {
      ...CLUSTER.fields,
      typed_extension_protocol_options: { check: (value, path) => checkExtensionProtocolOptions(value, path, extensions) },
      health_checks: list(healthCheckShape(extensions)),
    },
    // CLUSTER_PROVIDED is left to validation, which admits it for the types that provide their balancer only.
    values: {
      type: extensions.of('proxy.clusters').flatMap((t) => (t.configType === null ? [discoveryTypeOf(t.name)] : [])),
      lb_policy: [...extensions.of('proxy.load_balancers').map((lb) => lb.name), 'CLUSTER_PROVIDED'],
    },
  };
}

const LISTENER: Shape = {
  fields: {
    name: leaf,
    address: SOCKET_ADDRESS,
    per_connection_buffer_limit_bytes: leaf,
    metadata: METADATA,
    // A listen socket per worker (src/listener/listen_sockets.ts).
    reuse_port: leaf,
    // Connections passed between the workers (src/listener/exact_connection_balancer.ts).
    connection_balance_config: { fields: { exact_balance: leaf } },
    // Read by /drain_listeners?inboundonly.
    traffic_direction: leaf,
    // The TLS inspector finds what filter_chain_match compares (src/listener).
    listener_filters: list({ fields: { name: leaf, typed_config: anyContent } }),
    listener_filters_timeout: leaf,
    continue_on_listener_filters_timeout: leaf,
    // Matching on addresses (prefix_ranges, source_*) is refused until chain selection does it.
    filter_chains: list({
      fields: {
        filter_chain_match: { fields: { destination_port: leaf, server_names: leaf, transport_protocol: leaf, application_protocols: leaf } },
        filters: list({ fields: { name: leaf, typed_config: anyContent } }),
        transport_socket: { fields: { name: leaf, typed_config: anyContent } },
      },
    }),
  },
};

// tls.v3.Secret of static_resources and SDS: certificates and validation contexts.
// session_ticket_keys (the listener sets no session tickets) and generic_secret (no filter reads
// one) are refused.
const SECRET: Shape = { fields: { name: leaf, tls_certificate: TLS_CERTIFICATE, validation_context: CERTIFICATE_VALIDATION_CONTEXT } };

const STATS_CONFIG: Shape = {
  fields: {
    stats_tags: list({ fields: { tag_name: leaf, fixed_value: leaf } }),
    use_all_default_tags: leaf,
    histogram_bucket_settings: list({ fields: { match: STRING_MATCHER, buckets: leaf } }),
  },
};

// proxyext.admin.v3.AdminSecurity, the proxy's own (src/admin/admin_access.ts); the transport
// socket's typed_config is the listeners' DownstreamTlsContext shape.
const ADMIN_SECURITY: Shape = {
  fields: {
    bearer_tokens: list({ fields: { name: leaf, path: leaf, role: leaf } }),
    transport_socket: { fields: { name: leaf, typed_config: anyContent } },
    client_certificate_roles: list({ fields: { san: STRING_MATCHER, subject: STRING_MATCHER, role: leaf } }),
    allowed_source_ranges: list({ fields: { address_prefix: leaf, prefix_len: leaf } }),
  },
};

// The Bootstrap's fields but static_resources, whose clusters' shape is the registry's.
const BOOTSTRAP: Shape = {
  fields: {
    node: { fields: { id: leaf, cluster: leaf, locality: LOCALITY, metadata: METADATA } },
    admin: { fields: { access_log_path: leaf, profile_path: leaf, address: SOCKET_ADDRESS, security: ADMIN_SECURITY } },
    // CDS and LDS (also over ADS); RDS is a connection manager's `rds`.
    dynamic_resources: { fields: { cds_config: CONFIG_SOURCE, lds_config: CONFIG_SOURCE, ads_config: API_CONFIG_SOURCE } },
    cluster_manager: { fields: { local_cluster_name: leaf } },
    stats_flush_interval: leaf,
    stats_config: STATS_CONFIG,
    // Each sink's typed_config is checked by its @type (src/extensions/stat_sinks).
    stats_sinks: list({ fields: { name: leaf, typed_config: anyContent } }),
    // The tracer of every connection manager that names none (its typed_config: its descriptor's shape).
    tracing: { fields: { http: { fields: { name: leaf, typed_config: anyContent } } } },
    // Each worker's overload manager (src/overload). Threshold triggers only: Envoy 1.16's actions
    // act when saturated and none reads a scaled value; an action's typed_config configures none of these.
    overload_manager: {
      fields: {
        refresh_interval: leaf,
        // Each monitor's typed_config is checked by its @type (src/extensions/resource_monitors).
        resource_monitors: list({ fields: { name: leaf, typed_config: anyContent } }),
        actions: list({ fields: { name: leaf, triggers: list({ fields: { name: leaf, threshold: { fields: { value: leaf } } } }) } }),
      },
    },
    layered_runtime: {
      fields: {
        layers: list({
          fields: {
            name: leaf,
            static_layer: leaf,
            disk_layer: { fields: { symlink_root: leaf, subdirectory: leaf, append_service_cluster: leaf } },
            admin_layer: { fields: {} },
            rtds_layer: { fields: { name: leaf, rtds_config: CONFIG_SOURCE } },
          },
        }),
      },
    },
  },
};

function bootstrapShape(extensions: ConfigExtensions): Shape {
  return {
    fields: { ...BOOTSTRAP.fields, static_resources: { fields: { listeners: list(LISTENER), clusters: list(clusterShape(extensions)), secrets: list(SECRET) } } },
  };
}

function check(message: JsonObject, shape: Shape, path: string, extensions: ConfigExtensions): void {
  const errors = new FieldErrorCollector();
  checkShape(message, shape, path, errors, (url) => extensions.shapeOfType(url));
  errors.throwIfAny();
}

/** @throws FieldError (FieldErrors for several) naming each field this build would not act on. */
export function checkCapabilities(bootstrap: JsonObject, extensions: ConfigExtensions): void {
  check(bootstrap, bootstrapShape(extensions), '', extensions);
}

/**
 * The same, for a ClusterLoadAssignment from EDS: the paths start at the resource.
 * @throws FieldError (FieldErrors for several)
 */
export function checkLoadAssignmentCapabilities(assignment: JsonObject): void {
  const errors = new FieldErrorCollector();
  checkShape(assignment, LOAD_ASSIGNMENT, '', errors, () => undefined);
  errors.throwIfAny();
}

/**
 * The check of one cluster at `path` (a CDS resource), as the same cluster is checked in a bootstrap.
 * @throws FieldError (FieldErrors for several)
 */
export function checkClusterCapabilities(cluster: JsonObject, path: string, extensions: ConfigExtensions): void {
  check(cluster, clusterShape(extensions), path, extensions);
}

/**
 * The same, for a Secret from SDS at `path` (`resources[0]`).
 * @throws FieldError (FieldErrors for several)
 */
export function checkSecretCapabilities(secret: JsonObject, path: string): void {
  const errors = new FieldErrorCollector();
  checkShape(secret, SECRET, path, errors, () => undefined);
  errors.throwIfAny();
}
