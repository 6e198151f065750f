import assert from 'node:assert/strict';
import { test } from 'node:test';
import { load } from 'js-yaml';
import { proxyBootstrapYaml } from '../../bench/proxy_config';
import { loadBootstrap } from '../../src/config/load';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';

const ports = { listenPort: 10001, upstreamPort: 10002, adminPort: 10003 };

interface Bootstrap {
  admin: { access_log_path: string; address: { socket_address: { address: string; port_value: number } } };
  static_resources: {
    listeners: { address: { socket_address: { port_value: number } }; filter_chains: { filters: { name: string; typed_config: Record<string, unknown> }[] }[] }[];
    clusters: {
      name: string;
      type: string;
      load_assignment: { endpoints: { lb_endpoints: { endpoint: { address: { socket_address: { address: string; port_value: number } } } }[] }[] };
    }[];
  };
}

function parse(layer: 'http' | 'tcp'): Bootstrap {
  return load(proxyBootstrapYaml({ layer, ...ports })) as Bootstrap;
}

test('admin on the chosen loopback port, one STATIC cluster of the upstream', () => {
  const bootstrap = parse('http');
  assert.deepEqual(bootstrap.admin, {
    access_log_path: '/dev/null',
    address: { socket_address: { address: '127.0.0.1', port_value: 10003 } },
  });
  const [cluster] = bootstrap.static_resources.clusters;
  assert.equal(cluster?.type, 'STATIC');
  assert.deepEqual(cluster?.load_assignment.endpoints[0]?.lb_endpoints[0]?.endpoint.address.socket_address, {
    address: '127.0.0.1',
    port_value: 10002,
  });
});

test('the HTTP listener routes every path to the cluster through the router', () => {
  const bootstrap = parse('http');
  const [listener] = bootstrap.static_resources.listeners;
  assert.equal(listener?.address.socket_address.port_value, 10001);
  const [filter] = listener?.filter_chains[0]?.filters ?? [];
  assert.equal(filter?.name, 'proxy.filters.network.http_connection_manager');
  assert.deepEqual(filter?.typed_config.route_config, {
    name: 'bench_route',
    virtual_hosts: [{ name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster: bootstrap.static_resources.clusters[0]?.name } }] }],
  });
  assert.deepEqual(
    (filter?.typed_config.http_filters as { name: string }[]).map((httpFilter) => httpFilter.name),
    ['proxy.filters.http.router'],
  );
});

test('the TCP listener hands every connection to tcp_proxy for the same cluster', () => {
  const bootstrap = parse('tcp');
  const [filter] = bootstrap.static_resources.listeners[0]?.filter_chains[0]?.filters ?? [];
  assert.equal(filter?.name, 'proxy.filters.network.tcp_proxy');
  assert.equal(filter?.typed_config.cluster, bootstrap.static_resources.clusters[0]?.name);
  assert.equal(filter?.typed_config['@type'], 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy');
});

test("the features row: a file access log, a retry policy, a LEAST_REQUEST cluster with breakers above the load; the proxy takes it as it is", () => {
  const yaml = proxyBootstrapYaml({ layer: 'http', ...ports, features: true, accessLogPath: '/tmp/b/access.log' });
  const parsed = load(yaml) as Bootstrap & { static_resources: { clusters: { lb_policy: string; circuit_breakers?: { thresholds: { max_requests: number }[] } }[] } };
  const cluster = parsed.static_resources.clusters[0]!;
  assert.equal(cluster.circuit_breakers?.thresholds[0]?.max_requests, 100000);
  assert.equal(cluster.lb_policy, 'LEAST_REQUEST');
  const loaded = loadBootstrap({ extensions: builtinExtensions(), configYaml: yaml, allowUnknownStaticFields: false });
  assert.equal(loaded.bootstrap.clusters[0]?.circuitBreakers.DEFAULT.maxRequests, 100000);
  assert.match(yaml, /retry_on: 5xx,connect-failure,reset/);
  assert.match(yaml, /path: \/tmp\/b\/access.log/);
  const plain = parse('http');
  assert.equal('circuit_breakers' in plain.static_resources.clusters[0]!, false);
  assert.doesNotMatch(proxyBootstrapYaml({ layer: 'http', ...ports }), /retry_policy|access_log:|LEAST_REQUEST/);
});

test('the TLS listener terminates TLS with the run’s certificate files; the HTTP/2 one is the HTTP one', () => {
  const certificate = { certificatePath: '/tmp/b/c.pem', keyPath: '/tmp/b/k.pem' };
  const tls = load(proxyBootstrapYaml({ layer: 'tls', ...ports, certificate })) as { static_resources: { listeners: { filter_chains: Record<string, unknown>[] }[] } };
  assert.deepEqual(tls.static_resources.listeners[0]?.filter_chains[0]?.transport_socket, {
    name: 'proxy.transport_sockets.tls',
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext',
      common_tls_context: { tls_certificates: [{ certificate_chain: { filename: '/tmp/b/c.pem' }, private_key: { filename: '/tmp/b/k.pem' } }] },
    },
  });
  const h2 = load(proxyBootstrapYaml({ layer: 'h2', ...ports })) as Bootstrap;
  assert.deepEqual(h2.static_resources.listeners[0]?.filter_chains, parse('http').static_resources.listeners[0]?.filter_chains);
  assert.throws(() => proxyBootstrapYaml({ layer: 'tls', ...ports }), /certificate/);
});
