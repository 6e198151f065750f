// The bootstrap our proxy runs under in the benchmark: one listener sending everything to a
// STATIC cluster of the nginx upstream, as an HTTP connection manager (L7 rows) or a tcp_proxy
// (L4 rows). Built as a v3 object and dumped to YAML, the format an operator would write.

import { dump } from 'js-yaml';
import type { Layer } from './plan';

export interface ProxyBenchConfig {
  readonly layer: Layer;
  readonly listenPort: number;
  readonly upstreamPort: number;
  readonly adminPort: number;
  /**
   * What an operator runs: the cluster health-checked, outlier-detected and circuit-broken with
   * LEAST_REQUEST, a retry policy on the route (give accessLogPath too, for the file access log).
   */
  readonly features?: boolean;
  /** The TLS layer's certificate and key files. */
  readonly certificate?: { readonly certificatePath: string; readonly keyPath: string };
  /** A file access log (the default format) on the listener's filter, to measure what logging costs. */
  readonly accessLogPath?: string;
  /** The L7 route table's size, to measure what matching costs: n - 1 routes the bench's paths never match, then theirs. 1 when unset. */
  readonly routeCount?: number;
  /** HTTP filters before the router, each configured to act on no request of the bench. */
  readonly httpFilters?: readonly BenchHttpFilter[];
  /** The admin's profile_path: where /cpuprofiler writes each process's profile. */
  readonly profilePath?: string;
  /** The listener's reuse_port: a socket per worker, for the worker-scaling run. */
  readonly reusePort?: boolean;
  /** The listener's connection_balance_config.exact_balance, for the worker-scaling run. */
  readonly exactBalance?: boolean;
}

/**
 * HTTP filters as an operator's chain carries them, on requests none of them acts on: CORS with
 * no policy on the route (the bench sends no Origin), fault injection at 0%, a local rate limit
 * whose bucket never runs out.
 */
const BENCH_HTTP_FILTERS = {
  cors: { name: 'proxy.filters.http.cors', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.cors.v3.Cors' } },
  fault: {
    name: 'proxy.filters.http.fault',
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault',
      abort: { http_status: 503, percentage: { numerator: 0 } },
      delay: { fixed_delay: '1s', percentage: { numerator: 0 } },
    },
  },
  local_ratelimit: {
    name: 'proxy.filters.http.local_ratelimit',
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit',
      stat_prefix: 'bench',
      token_bucket: { max_tokens: 1_000_000_000, tokens_per_fill: 1_000_000_000, fill_interval: '1s' },
      filter_enabled: { default_value: { numerator: 100 }, runtime_key: 'bench.local_rate_limit_enabled' },
      filter_enforced: { default_value: { numerator: 100 }, runtime_key: 'bench.local_rate_limit_enforced' },
    },
  },
} as const;

export type BenchHttpFilter = keyof typeof BENCH_HTTP_FILTERS;

export function isBenchHttpFilter(name: string): name is BenchHttpFilter {
  return Object.hasOwn(BENCH_HTTP_FILTERS, name);
}

/** A comma-separated list of bench filters (empty when unset); `refuse` makes the error for a name without a bench configuration. */
export function parseBenchHttpFilters(text: string | undefined, refuse: (message: string) => Error): readonly BenchHttpFilter[] {
  if (text === undefined || text.trim() === '') return [];
  return text.split(',').map((name) => {
    const filter = name.trim();
    if (!isBenchHttpFilter(filter)) throw refuse(`no bench configuration for HTTP filter '${filter}'`);
    return filter;
  });
}

const CLUSTER = 'bench_upstream';

function socketAddress(port: number): object {
  return { socket_address: { address: '127.0.0.1', port_value: port } };
}

/** The TLS layer's filter chain terminates TLS with the bench's certificate. */
function transportSocket(config: ProxyBenchConfig): object {
  if (config.layer !== 'tls') return {};
  if (config.certificate === undefined) throw new Error('the TLS layer needs a certificate');
  return {
    transport_socket: {
      name: 'proxy.transport_sockets.tls',
      typed_config: {
        '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext',
        common_tls_context: {
          tls_certificates: [{ certificate_chain: { filename: config.certificate.certificatePath }, private_key: { filename: config.certificate.keyPath } }],
        },
      },
    },
  };
}

// HTTP/2 with prior knowledge needs nothing of its own: codec_type AUTO (the default) tells the
// h2 preface from an HTTP/1.1 request line.
function terminalFilter(config: ProxyBenchConfig): object {
  const { layer, accessLogPath } = config;
  const accessLog =
    accessLogPath === undefined
      ? {}
      : { access_log: [{ name: 'proxy.access_loggers.file', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog', path: accessLogPath } }] };
  if (layer === 'tcp') {
    return {
      name: 'proxy.filters.network.tcp_proxy',
      typed_config: {
        '@type': 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy',
        stat_prefix: 'bench_tcp',
        cluster: CLUSTER,
        ...accessLog,
      },
    };
  }
  return {
    name: 'proxy.filters.network.http_connection_manager',
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
      stat_prefix: 'bench_http',
      route_config: {
        name: 'bench_route',
        virtual_hosts: [{ name: 'all', domains: ['*'], routes: benchRoutes(config.routeCount ?? 1, config.features === true) }],
      },
      http_filters: [
        ...(config.httpFilters ?? []).map((name) => BENCH_HTTP_FILTERS[name]),
        {
          name: 'proxy.filters.http.router',
          typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' },
        },
      ],
      ...accessLog,
    },
  };
}

/**
 * `count` routes, the last the bench's catch-all. Those before it are what a large table holds:
 * service prefixes and exact paths, each a different cluster in real life, here the same one.
 * With `retries`, the catch-all retries what an operator's route retries (the upstream never
 * fails, so the row measures the policy's bookkeeping).
 */
function benchRoutes(count: number, retries: boolean): object[] {
  const routes: object[] = [];
  for (let i = 1; i < count; i++) {
    const match = i % 4 === 0 ? { path: `/api/v1/service-${i}/health` } : { prefix: `/api/v1/service-${i}/` };
    routes.push({ match, route: { cluster: CLUSTER } });
  }
  const retryPolicy = retries ? { retry_policy: { retry_on: '5xx,connect-failure,reset', num_retries: 2 } } : {};
  routes.push({ match: { prefix: '/' }, route: { cluster: CLUSTER, ...retryPolicy } });
  return routes;
}

/**
 * The features row's cluster fields. The circuit breakers are set high enough never to refuse the
 * benchmark's load, and the upstream never fails, so the row measures the cost of admission, of
 * counting outcomes, of choosing the least loaded host and of the health checks alone.
 */
function resilience(): object {
  return {
    lb_policy: 'LEAST_REQUEST',
    circuit_breakers: {
      thresholds: [{ priority: 'DEFAULT', max_connections: 100000, max_pending_requests: 100000, max_requests: 100000, max_retries: 3, track_remaining: true }],
    },
    // Envoy's defaults, written out: every request's outcome is counted for the detector.
    outlier_detection: { consecutive_5xx: 5, interval: '10s', base_ejection_time: '30s', max_ejection_percent: 10 },
    // Checked once a second from the supervisor: no work in the worker that carries the load.
    health_checks: [{ timeout: '1s', interval: '1s', unhealthy_threshold: 3, healthy_threshold: 1, http_health_check: { path: '/' } }],
  };
}

export function proxyBootstrap(config: ProxyBenchConfig): object {
  return {
    admin: { access_log_path: '/dev/null', address: socketAddress(config.adminPort), ...(config.profilePath === undefined ? {} : { profile_path: config.profilePath }) },
    static_resources: {
      listeners: [
        {
          name: `bench_${config.layer}`,
          address: socketAddress(config.listenPort),
          ...(config.reusePort === true ? { reuse_port: true } : {}),
          ...(config.exactBalance === true ? { connection_balance_config: { exact_balance: {} } } : {}),
          filter_chains: [{ filters: [terminalFilter(config)], ...transportSocket(config) }],
        },
      ],
      clusters: [
        {
          name: CLUSTER,
          connect_timeout: '1s',
          type: 'STATIC',
          lb_policy: 'ROUND_ROBIN',
          load_assignment: {
            cluster_name: CLUSTER,
            endpoints: [{ lb_endpoints: [{ endpoint: { address: socketAddress(config.upstreamPort) } }] }],
          },
          ...(config.features === true ? resilience() : {}),
        },
      ],
    },
  };
}

export function proxyBootstrapYaml(config: ProxyBenchConfig): string {
  return `# Generated by bench/proxy_config.ts for one benchmark run.\n${dump(proxyBootstrap(config), { lineWidth: -1 })}`;
}

/**
 * The benchmarks' listener `http_in` on 127.0.0.1:`port`: every request goes to `cluster`;
 * `routeConfig` is merged into its route configuration (`validate_clusters: false` lets it name
 * a cluster CDS brings later).
 */
export function routeAllBenchListener(port: number, cluster: string, routeConfig: object = {}): object {
  return {
    name: 'http_in',
    address: { socket_address: { address: '127.0.0.1', port_value: port } },
    filter_chains: [
      {
        filters: [
          {
            name: 'proxy.filters.network.http_connection_manager',
            typed_config: {
              '@type': 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
              stat_prefix: 'ingress_http',
              route_config: {
                virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster } }] }],
                ...routeConfig,
              },
              http_filters: [{ name: 'proxy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } }],
            },
          },
        ],
      },
    ],
  };
}

/**
 * `clusters` STATIC clusters `c0`.. of 3 hosts each (127.0.0.1 to .3 on `upstreamPort`), the
 * scale benchmarks' bootstrap, with routeAllBenchListener routing to `c0`.
 */
export function staticClustersBootstrap(clusters: number, upstreamPort: number, listenPort: number, adminPort: number): object {
  const socket = (address: string, port: number) => ({ socket_address: { address, port_value: port } });
  return {
    admin: { access_log_path: '/dev/null', address: socket('127.0.0.1', adminPort) },
    static_resources: {
      listeners: [routeAllBenchListener(listenPort, 'c0')],
      clusters: Array.from({ length: clusters }, (_, i) => ({
        name: `c${i}`,
        connect_timeout: '1s',
        load_assignment: {
          cluster_name: `c${i}`,
          endpoints: [{ lb_endpoints: ['127.0.0.1', '127.0.0.2', '127.0.0.3'].map((a) => ({ endpoint: { address: socket(a, upstreamPort) } })) }],
        },
      })),
    },
  };
}
