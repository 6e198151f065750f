// The HTTP connection manager's fields this build acts on: its settings and its route table,
// inline or from RDS. Each HTTP filter's typed_config is checked by its own descriptor's shape.

import { HEADER_VALUE_OPTION, HTTP2_PROTOCOL_OPTIONS, REGEX_MATCHER, RUNTIME_FRACTION, STRING_MATCHER } from '../../../config/common_shapes';
import { CONFIG_SOURCE } from '../../../config/capabilities';
import { HEADER_MATCHER } from '../../../config/header_matcher';
import { RATE_LIMIT } from '../../../config/rate_limit_policy';
import { anyContent, leaf, list, refused, Shape, typedMap } from '../../../config/shape';
import { ACCESS_LOG_LIST } from '../../access_loggers/access_log_list';

// type.tracing.v3.CustomTag; its metadata kind is refused.
const CUSTOM_TAG: Shape = {
  fields: {
    tag: leaf,
    literal: { fields: { value: leaf } },
    environment: { fields: { name: leaf, default_value: leaf } },
    request_header: { fields: { name: leaf, default_value: leaf } },
    metadata: refused('custom tags (request, route, cluster or host metadata) are not implemented by this build (the tag would be missing)'),
  },
};

const FRACTIONAL_PERCENT: Shape = { fields: { numerator: leaf, denominator: leaf } };

// Only `proxy.lb` (`envoy.lb`) counts, as in Envoy; typed_filter_metadata (after 1.16) is refused.
const METADATA_MATCH: Shape = { fields: { filter_metadata: leaf } };

const REGEX_SUBSTITUTION: Shape = { fields: { pattern: REGEX_MATCHER, substitution: leaf } };

// Envoy 1.16's CorsPolicy (v2's allow_origin and enabled arrive upgraded); what proxy.filters.http.cors enforces.
const CORS_POLICY: Shape = {
  fields: {
    allow_origin_string_match: list(STRING_MATCHER),
    allow_methods: leaf,
    allow_headers: leaf,
    expose_headers: leaf,
    max_age: leaf,
    allow_credentials: leaf,
    filter_enabled: RUNTIME_FRACTION,
    shadow_enabled: RUNTIME_FRACTION,
  },
};

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

const HEADER_MUTATIONS = {
  request_headers_to_add: list(HEADER_VALUE_OPTION),
  request_headers_to_remove: leaf,
  response_headers_to_add: list(HEADER_VALUE_OPTION),
  response_headers_to_remove: leaf,
} as const;

// A RouteConfiguration, inline or from RDS (route_config_resource.ts).
export const ROUTE_CONFIG: Shape = {
  fields: {
    name: leaf,
    validate_clusters: leaf,
    vhds: refused('(virtual host discovery, VHDS) is not supported by this build (its virtual hosts would never come)'),
    ...HEADER_MUTATIONS,
    most_specific_header_mutations_wins: leaf,
    internal_only_headers: leaf,
    virtual_hosts: list({
      fields: {
        name: leaf,
        domains: leaf,
        require_tls: leaf,
        cors: CORS_POLICY,
        ...HEADER_MUTATIONS,
        // Each entry by its filter's per-route shape (the filter's descriptor).
        typed_per_filter_config: typedMap,
        include_request_attempt_count: leaf,
        include_attempt_count_in_response: leaf,
        retry_policy: RETRY_POLICY,
        rate_limits: list(RATE_LIMIT),
        // v2's pattern and method arrive as headers (src/config/v2_upgrade.ts).
        virtual_clusters: list({ fields: { name: leaf, headers: list(HEADER_MATCHER) } }),
        routes: list({
          fields: {
            name: leaf,
            ...HEADER_MUTATIONS,
            typed_per_filter_config: typedMap,
            match: {
              fields: {
                prefix: leaf,
                connect_matcher: { fields: {} },
                path: leaf,
                safe_regex: REGEX_MATCHER,
                case_sensitive: leaf,
                runtime_fraction: RUNTIME_FRACTION,
                headers: list(HEADER_MATCHER),
                query_parameters: list({ fields: { name: leaf, string_match: STRING_MATCHER, present_match: leaf } }),
                grpc: { fields: {} },
                tls_context: { fields: { presented: leaf, validated: leaf } },
              },
            },
            route: {
              fields: {
                cluster: leaf,
                weighted_clusters: {
                  fields: {
                    clusters: list({ fields: { name: leaf, weight: leaf, metadata_match: METADATA_MATCH, ...HEADER_MUTATIONS, typed_per_filter_config: typedMap } }),
                    total_weight: leaf,
                    runtime_key_prefix: leaf,
                  },
                },
                timeout: leaf,
                idle_timeout: leaf,
                max_grpc_timeout: leaf,
                grpc_timeout_offset: leaf,
                prefix_rewrite: leaf,
                regex_rewrite: REGEX_SUBSTITUTION,
                cluster_header: leaf,
                cluster_not_found_response_code: leaf,
                // The router sends it as the upstream request's :authority/Host (v2: host_rewrite).
                host_rewrite_literal: leaf,
                // v2's auto_host_rewrite_header arrives under its v3 name.
                host_rewrite_header: leaf,
                auto_host_rewrite: leaf,
                host_rewrite_path_regex: REGEX_SUBSTITUTION,
                metadata_match: METADATA_MATCH,
                hash_policy: list(HASH_POLICY),
                priority: leaf,
                retry_policy: RETRY_POLICY,
                // trace_sampled waits for tracing; v2's runtime_key for nothing (v3 dropped it).
                request_mirror_policies: list({ fields: { cluster: leaf, runtime_fraction: RUNTIME_FRACTION } }),
                cors: CORS_POLICY,
                rate_limits: list(RATE_LIMIT),
                include_vh_rate_limits: leaf,
                // connect_config (Envoy 1.16's is empty) terminates CONNECT here.
                upgrade_configs: list({ fields: { upgrade_type: leaf, enabled: leaf, connect_config: { fields: {} } } }),
                // Envoy 1.16's InternalRedirectPolicy (response_headers_to_copy is newer); without
                // one, the deprecated internal_redirect_action and max_internal_redirects make it.
                internal_redirect_policy: {
                  fields: {
                    max_internal_redirects: leaf,
                    redirect_response_codes: leaf,
                    predicates: list({ fields: { name: leaf, typed_config: anyContent } }),
                    allow_cross_scheme_redirect: leaf,
                  },
                },
                internal_redirect_action: leaf,
                max_internal_redirects: leaf,
              },
            },
            // Envoy 1.16's RedirectAction; regex_rewrite is newer.
            redirect: {
              fields: {
                https_redirect: leaf,
                scheme_redirect: leaf,
                host_redirect: leaf,
                port_redirect: leaf,
                path_redirect: leaf,
                prefix_rewrite: leaf,
                response_code: leaf,
                strip_query: leaf,
              },
            },
            direct_response: { fields: { status: leaf, body: { fields: { inline_string: leaf, filename: leaf } } } },
            decorator: { fields: { operation: leaf, propagate: leaf } },
            tracing: {
              fields: { client_sampling: FRACTIONAL_PERCENT, random_sampling: FRACTIONAL_PERCENT, overall_sampling: FRACTIONAL_PERCENT, custom_tags: list(CUSTOM_TAG) },
            },
          },
        }),
      },
    }),
  },
};

export const HTTP_CONNECTION_MANAGER_SHAPE: Shape = {
  fields: {
    stat_prefix: leaf,
    codec_type: leaf,
    route_config: ROUTE_CONFIG,
    // scoped_routes is refused (not implemented).
    rds: { fields: { config_source: CONFIG_SOURCE, route_config_name: leaf } },
    http_filters: list({ fields: { name: leaf, typed_config: anyContent } }),
    use_remote_address: leaf,
    xff_num_trusted_hops: leaf,
    skip_xff_append: leaf,
    via: leaf,
    generate_request_id: leaf,
    preserve_external_request_id: leaf,
    server_header_transformation: leaf,
    normalize_path: leaf,
    merge_slashes: leaf,
    add_user_agent: leaf,
    server_name: leaf,
    stream_idle_timeout: leaf,
    request_timeout: leaf,
    request_headers_timeout: leaf,
    common_http_protocol_options: {
      fields: { idle_timeout: leaf, max_connection_duration: leaf, max_headers_count: leaf, max_stream_duration: leaf, headers_with_underscores_action: leaf },
    },
    // header_key_format: Envoy 1.16's one formatter; later ones (stateful_formatter) are refused.
    http_protocol_options: {
      fields: { accept_http_10: leaf, default_host_for_http_10: leaf, enable_trailers: leaf, header_key_format: { fields: { proper_case_words: { fields: {} } } } },
    },
    // allow_connect and the flood limits: downstream only (an upgrade routed to an HTTP/2 cluster
    // is still refused; Envoy 1.16 checks floods on downstream connections only).
    // stream_error_on_invalid_http_messaging stays refused: nghttp2 resets a stream it finds
    // malformed without telling node:http2, so the connection cannot be closed for it.
    http2_protocol_options: {
      fields: {
        ...HTTP2_PROTOCOL_OPTIONS.fields,
        allow_connect: leaf,
        max_outbound_frames: leaf,
        max_outbound_control_frames: leaf,
        max_consecutive_inbound_frames_with_empty_payload: leaf,
        max_inbound_priority_frames_per_stream: leaf,
        max_inbound_window_update_frames_per_data_frame_sent: leaf,
      },
    },
    access_log: ACCESS_LOG_LIST,
    // A filter chain of its own per upgrade type (filters) is refused until it is built.
    upgrade_configs: list({ fields: { upgrade_type: leaf, enabled: leaf } }),
    // spawn_upstream_span is newer than Envoy 1.16; provider's typed_config is its tracer's shape.
    tracing: {
      fields: {
        client_sampling: { fields: { value: leaf } },
        random_sampling: { fields: { value: leaf } },
        overall_sampling: { fields: { value: leaf } },
        verbose: leaf,
        max_path_tag_length: leaf,
        custom_tags: list(CUSTOM_TAG),
        provider: { fields: { name: leaf, typed_config: anyContent } },
      },
    },
  },
  values: { codec_type: ['AUTO', 'HTTP1', 'HTTP2'] },
};
