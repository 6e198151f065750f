// What this build runs. loadBootstrap accepts any valid Envoy bootstrap; this check refuses, by
// field path, whatever the proxy would decode and then ignore (health checks that never run, a
// TLS context that would silently be plaintext), in --mode validate as when serving. Each
// feature that lands adds its fields here. Pure: the decoded v3 bootstrap in, FieldError out.

import { FieldError, FieldErrorCollector, inConfigFile } from './errors';
import { childPath, indexPath, keyPath } from './field_path';
import { enumField, isJsonObject, JsonObject, messageField, stringField } from './json';
import { canonicalExtensionName, PROTOCOL_OPTIONS_TYPES } from './names';
import { LOAD_BALANCERS } from '../upstream/lb/load_balancer_registry';
import { discoveryTypeNames } from '../upstream/cluster_types';
import { ACCESS_LOG_SHAPE, FILE_ACCESS_LOG_SHAPE } from '../access_log/access_log_model';
import { clusterProvidedBalancers, clusterTypeName } from '../upstream/lb/cluster_provided_lb';

/**
 * A field refused for a reason of its own (Envoy ignores it there, say), not merely because
 * this build has not got to it yet; or one whose content a function of its own checks.
 */
interface Refused {
  readonly refused: string;
}
interface Checked {
  readonly check: (value: unknown, path: string) => void;
}

type AllowedValues = Readonly<Record<string, readonly string[]>>;

/** The fields a message may carry, and the shapes of those that are messages themselves. */
interface Shape {
  readonly fields: Readonly<Record<string, Shape | 'leaf' | { readonly list: Shape | 'leaf' } | Refused | Checked>>;
  /** Enum or string fields restricted to some values, which may depend on the message's other fields. */
  readonly values?: AllowedValues | ((message: JsonObject) => AllowedValues);
}

const leaf = 'leaf' as const;
const list = (shape: Shape | 'leaf') => ({ list: shape });
const refused = (reason: string): Refused => ({ refused: reason });
const anyContent: Shape = { fields: {} };

// core.v3.ApiConfigSource as the xDS client runs it (src/config/xds): state-of-the-world gRPC
// and REST polling. Refused: DELTA_GRPC, rate_limit_settings, gRPC credentials, timeouts and
// initial metadata, more than the target of a google_grpc service.
const API_CONFIG_SOURCE: Shape = {
  fields: {
    api_type: leaf,
    transport_api_version: leaf,
    grpc_services: list({ fields: { envoy_grpc: { fields: { cluster_name: leaf } }, google_grpc: { fields: { target_uri: leaf, stat_prefix: leaf } } } }),
    cluster_names: leaf,
    refresh_delay: leaf,
    request_timeout: leaf,
    set_node_on_first_message_only: leaf,
  },
  values: { api_type: ['GRPC', 'REST'] },
};

// core.v3.ConfigSource: a file, a management server (api_config_source) or the ADS stream.
const CONFIG_SOURCE: Shape = {
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

// A matcher's safe_regex runs on RE2 (src/regex). A tag's own regex is not taken yet: its
// capture groups cut the name, which the tag producer does for its built-in rules only.
const REGEX_MATCHER: Shape = { fields: { google_re2: { fields: { max_program_size: leaf } }, regex: leaf } };

const STRING_MATCHER: Shape = {
  fields: { exact: leaf, prefix: leaf, suffix: leaf, contains: leaf, safe_regex: REGEX_MATCHER, ignore_case: leaf },
};

const PAYLOAD: Shape = { fields: { text: leaf, binary: leaf } };

// core.v3.DataSource as Envoy 1.16 has it (environment_variable is newer). Read when its
// context is built; a file is watched and reloaded when it changes.
const DATA_SOURCE: Shape = { fields: { filename: leaf, inline_bytes: leaf, inline_string: leaf } };

// The CommonTlsContext of both sides, as src/tls loads it. Refused: SDS secrets, certificate
// and private key providers, OCSP staples and SCTs, combined and SDS validation contexts, the
// deprecated verify_subject_alt_name and trust_chain_verification.
const COMMON_TLS_CONTEXT: Shape = {
  fields: {
    tls_params: { fields: { tls_minimum_protocol_version: leaf, tls_maximum_protocol_version: leaf, cipher_suites: leaf, ecdh_curves: leaf } },
    tls_certificates: list({ fields: { certificate_chain: DATA_SOURCE, private_key: DATA_SOURCE, password: DATA_SOURCE } }),
    validation_context: {
      fields: {
        trusted_ca: DATA_SOURCE,
        match_subject_alt_names: list(STRING_MATCHER),
        verify_certificate_spki: leaf,
        verify_certificate_hash: leaf,
        crl: DATA_SOURCE,
        allow_expired_certificate: leaf,
      },
    },
    alpn_protocols: leaf,
  },
};

// `proxy.transport_sockets.tls` on a cluster (src/tls/tls_connector.ts). allow_renegotiation
// sets OpenSSL's SSL_OP_NO_RENEGOTIATION when false (Envoy's default) and clears it when true.
const UPSTREAM_TLS_CONTEXT: Shape = {
  fields: { common_tls_context: COMMON_TLS_CONTEXT, sni: leaf, allow_renegotiation: leaf, max_session_keys: leaf },
};

// typed_config is checked by its @type (TYPED_CONFIGS): UpstreamTlsContext, RawBuffer or
// ProxyProtocolUpstreamTransport.
const UPSTREAM_TRANSPORT_SOCKET: Shape = { fields: { name: leaf, typed_config: anyContent } };

// Envoy 1.16's upstream PROXY protocol socket (src/network/upstream_proxy_protocol.ts); the TLV
// pass-through and the options after 1.16 stay refused.
const UPSTREAM_PROXY_PROTOCOL: Shape = { fields: { config: { fields: { version: leaf } }, transport_socket: UPSTREAM_TRANSPORT_SOCKET } };

// Active health checking (src/upstream/health_check). Refused: custom checkers, the event
// service, tls_options, alt_port, HTTP/2 and HTTP/3 HTTP checks (the HTTP probe speaks HTTP/1.1)
// and the HTTP check's send/receive (not implemented in Envoy).
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
    http_health_check: {
      fields: {
        host: leaf,
        path: leaf,
        expected_statuses: list({ fields: { start: leaf, end: leaf } }),
        request_headers_to_add: list({ fields: { header: { fields: { key: leaf, value: leaf } }, append: leaf } }),
        request_headers_to_remove: leaf,
        service_name_matcher: STRING_MATCHER,
        codec_client_type: leaf,
      },
      values: { codec_client_type: ['HTTP1'] },
    },
    tcp_health_check: { fields: { send: PAYLOAD, receive: list(PAYLOAD) } },
    grpc_health_check: { fields: { service_name: leaf, authority: leaf } },
  },
};

// Every other Cluster field is carried into the model but refused here until something acts
// on it (docs/clusters.md lists each field's status). `hosts` and `tls_context` are v2 fields
// the upgrade turned into load_assignment and transport_socket, checked as those.
// The Http2ProtocolOptions node:http2 (nghttp2) is told; the others (flood limits, stream error
// handling, custom settings) stay refused.
const HTTP2_PROTOCOL_OPTIONS: Shape = {
  fields: { max_concurrent_streams: leaf, initial_stream_window_size: leaf, initial_connection_window_size: leaf, hpack_table_size: leaf },
};

// Envoy 1.16 applies these to the server side only and ignores them on a cluster's upstream
// connections: refused there, since a setting that does nothing is a mistake to report.
const DOWNSTREAM_ONLY = 'acts on requests from downstream clients only; Envoy ignores it on a cluster (it would be ignored)';

/**
 * typed_extension_protocol_options: Envoy 1.16 hands each entry to the network or HTTP filter of
 * that name, and only thrift_proxy and redis_proxy take any; this build has neither.
 */
function checkExtensionProtocolOptions(value: unknown, path: string): void {
  if (!isJsonObject(value)) return;
  const errors = new FieldErrorCollector();
  for (const name of Object.keys(value)) {
    errors.run(() => {
      const canonical = canonicalExtensionName(name);
      if (!PROTOCOL_OPTIONS_TYPES.has(canonical)) {
        throw new FieldError(keyPath(path, name), `Didn't find a registered network or http filter or protocol options implementation for name: '${name}'`);
      }
      throw new FieldError(keyPath(path, name), `protocol options for ${canonical}, a filter this build does not have (it would be ignored)`);
    });
  }
  errors.throwIfAny();
}

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
    typed_extension_protocol_options: { check: checkExtensionProtocolOptions },
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
    health_checks: list(HEALTH_CHECK_CONFIG),
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
  // Cluster types and load balancing policies come from their registries: one that lands
  // there is accepted here, CLUSTER_PROVIDED for a cluster type that provides its balancer.
  // Read when checked, not at import: the EDS cluster type imports this module.
  values: (cluster) => {
    const customType = messageField(cluster, 'cluster_type');
    const typeName = clusterTypeName({
      type: enumField(cluster, 'type', 'STATIC'),
      clusterType: customType === undefined ? null : { name: canonicalExtensionName(stringField(customType, 'name')) },
    });
    const provided = clusterProvidedBalancers().has(typeName) ? ['CLUSTER_PROVIDED'] : [];
    return { type: discoveryTypeNames(), lb_policy: [...LOAD_BALANCERS.keys(), ...provided] };
  },
};

// Only `proxy.lb` (`envoy.lb`) counts, as in Envoy; typed_filter_metadata (after 1.16) is refused.
const METADATA_MATCH: Shape = { fields: { filter_metadata: leaf } };

// Envoy 1.16's hash methods. header.regex_rewrite is refused until the rewrite is implemented;
// cookie.attributes is newer than 1.16.
const HASH_POLICY: Shape = {
  fields: {
    header: { fields: { header_name: leaf } },
    cookie: { fields: { name: leaf, ttl: leaf, path: leaf } },
    connection_properties: { fields: { source_ip: leaf } },
    query_parameter: { fields: { name: leaf } },
    filter_state: { fields: { key: leaf } },
    terminal: leaf,
  },
};

// Envoy 1.16's RetryPolicy, less retry_priority, retriable_headers, retriable_request_headers and
// rate-limited back-off, which the router does not act on. retry_on's names and the host
// predicates are checked in validation (a name this build does not honor is refused there).
const RETRY_POLICY: Shape = {
  fields: {
    retry_on: leaf,
    num_retries: leaf,
    per_try_timeout: leaf,
    retry_host_predicate: list({ fields: { name: leaf, typed_config: anyContent } }),
    host_selection_retry_max_attempts: leaf,
    retriable_status_codes: leaf,
    retry_back_off: { fields: { base_interval: leaf, max_interval: leaf } },
  },
};

const ROUTE_CONFIG: Shape = {
  fields: {
    name: leaf,
    validate_clusters: leaf,
    virtual_hosts: list({
      fields: {
        name: leaf,
        domains: leaf,
        retry_policy: RETRY_POLICY,
        routes: list({
          fields: {
            name: leaf,
            match: {
              fields: {
                prefix: leaf,
                path: leaf,
                case_sensitive: leaf,
                runtime_fraction: { fields: { default_value: { fields: { numerator: leaf, denominator: leaf } }, runtime_key: leaf } },
              },
            },
            route: {
              fields: {
                cluster: leaf,
                // Per-entry header mutations and filter configs are refused until the router applies them.
                weighted_clusters: {
                  fields: { clusters: list({ fields: { name: leaf, weight: leaf, metadata_match: METADATA_MATCH } }), total_weight: leaf, runtime_key_prefix: leaf },
                },
                timeout: leaf,
                prefix_rewrite: leaf,
                // The router sends it as the upstream request's :authority/Host (v2: host_rewrite).
                host_rewrite_literal: leaf,
                // v2's auto_host_rewrite_header arrives under its v3 name: the message names both.
                host_rewrite_header: refused('(auto_host_rewrite_header in v2) is not implemented by this build yet (it would be ignored)'),
                metadata_match: METADATA_MATCH,
                hash_policy: list(HASH_POLICY),
                priority: leaf,
                retry_policy: RETRY_POLICY,
              },
            },
            direct_response: { fields: { status: leaf, body: { fields: { inline_string: leaf } } } },
          },
        }),
      },
    }),
  },
};

const HTTP_CONNECTION_MANAGER: Shape = {
  fields: {
    stat_prefix: leaf,
    codec_type: leaf,
    route_config: ROUTE_CONFIG,
    http_filters: list({ fields: { name: leaf, typed_config: anyContent } }),
    use_remote_address: leaf,
    server_name: leaf,
    stream_idle_timeout: leaf,
    request_timeout: leaf,
    common_http_protocol_options: {
      fields: { idle_timeout: leaf, max_connection_duration: leaf, max_headers_count: leaf, max_stream_duration: leaf, headers_with_underscores_action: leaf },
    },
    // header_key_format: Envoy 1.16's one formatter; later ones (stateful_formatter) are refused.
    http_protocol_options: {
      fields: { accept_http_10: leaf, default_host_for_http_10: leaf, enable_trailers: leaf, header_key_format: { fields: { proper_case_words: { fields: {} } } } },
    },
    http2_protocol_options: HTTP2_PROTOCOL_OPTIONS,
    // Validated and modelled (accessLogs); refused until the connection manager calls createAccessLogs.
    access_log: list(ACCESS_LOG_SHAPE),
  },
  values: { codec_type: ['AUTO', 'HTTP1', 'HTTP2'] },
};

const TCP_PROXY: Shape = { fields: { stat_prefix: leaf, cluster: leaf, idle_timeout: leaf, access_log: list(ACCESS_LOG_SHAPE) } };

// HeaderMatcher as Envoy 1.16 has it; later additions (contains_match, string_match, ...) are refused.
const HEADER_MATCHER: Shape = {
  fields: {
    name: leaf,
    exact_match: leaf,
    safe_regex_match: REGEX_MATCHER,
    range_match: { fields: { start: leaf, end: leaf } },
    present_match: leaf,
    prefix_match: leaf,
    suffix_match: leaf,
    invert_match: leaf,
  },
};

const HEALTH_CHECK: Shape = {
  fields: { pass_through_mode: leaf, cache_time: leaf, cluster_min_healthy_percentages: leaf, headers: list(HEADER_MATCHER) },
};

// Session tickets, session timeouts and OCSP stapling are refused: the listener does not set them.
const DOWNSTREAM_TLS_CONTEXT: Shape = {
  fields: { common_tls_context: COMMON_TLS_CONTEXT, require_client_certificate: leaf, require_sni: leaf },
};

const TYPED_CONFIGS: Readonly<Record<string, Shape>> = {
  'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext': DOWNSTREAM_TLS_CONTEXT,
  'type.googleapis.com/envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer': { fields: {} },
  'type.googleapis.com/envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector': { fields: {} },
  'type.googleapis.com/envoy.extensions.filters.listener.original_dst.v3.OriginalDst': { fields: {} },
  'type.googleapis.com/envoy.extensions.filters.http.health_check.v3.HealthCheck': HEALTH_CHECK,
  'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router': { fields: {} },
  'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager': HTTP_CONNECTION_MANAGER,
  'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy': TCP_PROXY,
  'type.googleapis.com/envoy.extensions.transport_sockets.proxy_protocol.v3.ProxyProtocolUpstreamTransport': UPSTREAM_PROXY_PROTOCOL,
  'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext': UPSTREAM_TLS_CONTEXT,
  'type.googleapis.com/envoy.extensions.clusters.aggregate.v3.ClusterConfig': { fields: { clusters: leaf } },
  'type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog': FILE_ACCESS_LOG_SHAPE,
};

const LISTENER: Shape = {
  fields: {
    name: leaf,
    address: SOCKET_ADDRESS,
    per_connection_buffer_limit_bytes: leaf,
    metadata: METADATA,
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

const STATS_CONFIG: Shape = {
  fields: {
    stats_tags: list({ fields: { tag_name: leaf, fixed_value: leaf } }),
    use_all_default_tags: leaf,
    histogram_bucket_settings: list({ fields: { match: STRING_MATCHER, buckets: leaf } }),
  },
};

const BOOTSTRAP: Shape = {
  fields: {
    node: { fields: { id: leaf, cluster: leaf, locality: LOCALITY, metadata: METADATA } },
    admin: { fields: { access_log_path: leaf, profile_path: leaf, address: SOCKET_ADDRESS } },
    static_resources: { fields: { listeners: list(LISTENER), clusters: list(CLUSTER) } },
    // CDS (also over ADS); LDS and RDS are not implemented.
    dynamic_resources: { fields: { cds_config: CONFIG_SOURCE, ads_config: API_CONFIG_SOURCE } },
    cluster_manager: { fields: { local_cluster_name: leaf } },
    stats_flush_interval: leaf,
    stats_config: STATS_CONFIG,
    // rtds_layer is refused: runtime discovery (RTDS) is not implemented yet.
    layered_runtime: {
      fields: {
        layers: list({
          fields: {
            name: leaf,
            static_layer: leaf,
            disk_layer: { fields: { symlink_root: leaf, subdirectory: leaf, append_service_cluster: leaf } },
            admin_layer: { fields: {} },
          },
        }),
      },
    },
  },
};

function notImplemented(path: string, what: string): FieldError {
  return new FieldError(path, `${what} is not implemented by this build yet (it would be ignored)`);
}

function checkMessage(message: JsonObject, shape: Shape, path: string, errors: FieldErrorCollector): void {
  if (shape === anyContent) return;
  const values = typeof shape.values === 'function' ? shape.values(message) : shape.values;
  for (const [key, value] of Object.entries(message)) {
    errors.run(() => checkField(shape, values, key, value, childPath(path, key), errors));
  }
}

function checkField(shape: Shape, values: AllowedValues | undefined, key: string, value: unknown, fieldPath: string, errors: FieldErrorCollector): void {
  if (key === 'typed_config' && isJsonObject(value)) {
    const inner = TYPED_CONFIGS[String(value['@type'])];
    if (inner) checkMessage(value, { ...inner, fields: { '@type': leaf, ...inner.fields } }, fieldPath, errors);
    return;
  }
  const rule = shape.fields[key];
  if (rule === undefined) throw notImplemented(fieldPath, key);
  if (rule !== 'leaf' && 'refused' in rule) throw new FieldError(fieldPath, `${key} ${rule.refused}`);
  if (rule !== 'leaf' && 'check' in rule) {
    rule.check(value, fieldPath);
    return;
  }
  const allowed = values?.[key];
  if (allowed && !allowed.includes(String(value))) throw notImplemented(fieldPath, `${key} ${String(value)}`);
  if (rule === 'leaf') return;
  if ('list' in rule) {
    const element = rule.list;
    if (element === 'leaf' || !Array.isArray(value)) return;
    value.forEach((item, i) => {
      if (isJsonObject(item)) checkMessage(item, element, indexPath(fieldPath, i), errors);
    });
  } else if (isJsonObject(value)) {
    checkMessage(value, rule, fieldPath, errors);
  }
}

/** @throws FieldError (FieldErrors for several) naming each field this build would not act on. */
export function checkCapabilities(bootstrap: JsonObject): void {
  const errors = new FieldErrorCollector();
  checkMessage(bootstrap, BOOTSTRAP, '', errors);
  errors.throwIfAny();
}

/**
 * The same, for a ClusterLoadAssignment from EDS: the paths start at the resource.
 * @throws FieldError (FieldErrors for several)
 */
export function checkLoadAssignmentCapabilities(assignment: JsonObject): void {
  const errors = new FieldErrorCollector();
  checkMessage(assignment, LOAD_ASSIGNMENT, '', errors);
  errors.throwIfAny();
}

/**
 * The check of one cluster at `path` (a CDS resource), as the same cluster is checked in a bootstrap.
 * @throws FieldError (FieldErrors for several)
 */
export function checkClusterCapabilities(cluster: JsonObject, path: string): void {
  const errors = new FieldErrorCollector();
  checkMessage(cluster, CLUSTER, path, errors);
  errors.throwIfAny();
}

/** The same, for a loaded bootstrap (its v3 `source`), as ConfigError(s) of `file`. */
export function checkBootstrapCapabilities(source: unknown, file: string): void {
  inConfigFile(file, () => {
    if (isJsonObject(source)) checkCapabilities(source);
  });
}
