// A listener's filter chain built from the model: what a worker cannot run is refused with the
// field path of the bootstrap, by the builder the worker, the supervisor and --mode validate share.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SystemClock } from '../../src/common/clock';
import { ConfigError, FieldError } from '../../src/config/errors';
import type { Bootstrap, ListenerConfig } from '../../src/config/model';
import { NetworkFilterBuilder } from '../../src/listener/network_filter_builder';
import { LiveRuntime } from '../../src/runtime/live_runtime';
import { constructDataPlane } from '../../src/server/data_plane_construction';
import { neverDrain } from '../../src/server/drain_decider';
import { OverloadState } from '../../src/overload/overload_state';
import { NamingStatsStore } from '../../src/stats/naming_store';
import { ConnectionIds } from '../../src/log/connection_log';
import { ClusterManager } from '../../src/upstream/worker/cluster_manager';
import { anyMatch, directRoute, httpConnectionManager, listener, silentLogger, staticCluster, tcpProxy, virtualHost } from '../helpers/data_plane';
import { dataPlaneFactories } from '../../src/extensions/data_plane_extensions';
import { RouteConfigUpdates } from '../../src/filters/network/http_connection_manager/route_config_updates';
import { SecretStore } from '../../src/tls/secret_store';

function bootstrapOf(listeners: ListenerConfig[]): Bootstrap {
  return {
    node: { id: 'test', cluster: 'test', locality: { region: '', zone: '', subZone: '' } },
    admin: null,
    listeners,
    clusters: [staticCluster('backend', [{ port: 9 }])],
    localClusterName: null,
    dynamicResources: { adsConfig: null, cdsConfig: null, ldsConfig: null },
    statsFlushIntervalMs: 5000,
    localAddress: undefined,
    statsConfig: { statsTags: [], useAllDefaultTags: true, histogramBucketSettings: [] },
    statsSinks: [],
    runtimeLayers: [],
    tracing: null,
    secrets: [],
    overloadManager: null,
    source: {},
  };
}

function builderOf(bootstrap: Bootstrap): NetworkFilterBuilder {
  const stats = new NamingStatsStore();
  return new NetworkFilterBuilder({
    bootstrap,
    stats,
    clusters: new ClusterManager({ configs: bootstrap.clusters, snapshots: [], store: stats, runtime: new LiveRuntime([]), log: () => silentLogger }),
    log: () => silentLogger,
    ids: ConnectionIds.forOneProcess(),
    drain: neverDrain,
    overload: new OverloadState(),
    runtime: new LiveRuntime([]),
    healthCheckFailed: () => false,
    clock: new SystemClock(),
    accessLogs: null,
    routeConfigs: new RouteConfigUpdates([]),
    secrets: new SecretStore([]),
    ...dataPlaneFactories(),
  });
}

const routes = [virtualHost('all', ['*'], [directRoute({ prefix: '/' }, 200, '')])];
const hcm = httpConnectionManager(routes);

test('filter chains a worker cannot run are refused at their field', () => {
  const cases: [ListenerConfig, string, string][] = [
    [
      listener('two_chains', hcm, { filterChains: [{ filters: [hcm], transportSocket: null, match: anyMatch }, { filters: [tcpProxy('backend')], transportSocket: null, match: anyMatch }] }),
      'filter_chains[1]',
      "error adding listener '127.0.0.1:0': multiple filter chains with the same matching rules are defined",
    ],
    [listener('no_chain', hcm, { filterChains: [] }), 'filter_chains', 'no filter chains specified'],
    [listener('two_filters', hcm, { filterChains: [{ filters: [hcm, hcm], transportSocket: null, match: anyMatch }] }), 'filter_chains[0].filters', 'the filter chain must hold exactly one (terminal) filter, got 2'],
    [
      listener('lua', httpConnectionManager(routes, { httpFilters: [{ name: 'proxy.filters.http.lua' }, { name: 'proxy.filters.http.router' }] })),
      'filter_chains[0].filters[0].typed_config.http_filters[0].name',
      "http filter 'proxy.filters.http.lua' is not supported before proxy.filters.http.router",
    ],
    [
      listener('no_router', httpConnectionManager(routes, { httpFilters: [] })),
      'filter_chains[0].filters[0].typed_config.http_filters',
      'the last HTTP filter must be proxy.filters.http.router',
    ],
    [
      listener('same_domain', httpConnectionManager([virtualHost('a', ['a.com'], []), virtualHost('b', ['b.com', 'a.com'], [])])),
      'filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[1].domains[1]',
      'Only unique values for domains are permitted. Duplicate entry of domain a.com in route local_route',
    ],
  ];
  for (const [config, relative, reason] of cases) {
    // The refused listener is the second: the path names its own index.
    const builder = builderOf(bootstrapOf([listener('fine', tcpProxy('backend')), config]));
    builder.listenerFilter(0);
    assert.throws(
      () => builder.listenerFilter(1),
      (e: unknown) => e instanceof FieldError && e.fieldPath === `static_resources.listeners[1].${relative}` && e.reason === reason,
      config.name,
    );
  }
});

test('constructDataPlane reports the first listener or cluster a worker could not build as a ConfigError of the file', () => {
  const good = bootstrapOf([listener('http', hcm), listener('tcp', tcpProxy('backend'))]);
  constructDataPlane(good, 'good.yaml', () => silentLogger);
  const twoChains = bootstrapOf([listener('http', hcm, { filterChains: [{ filters: [hcm], transportSocket: null, match: anyMatch }, { filters: [hcm], transportSocket: null, match: anyMatch }] })]);
  assert.throws(
    () => constructDataPlane(twoChains, 'bad.yaml', () => silentLogger),
    (e: unknown) =>
      e instanceof ConfigError &&
      e.message === "bad.yaml: static_resources.listeners[0].filter_chains[1]: error adding listener '127.0.0.1:0': multiple filter chains with the same matching rules are defined",
  );
  const provided = { ...good, clusters: [staticCluster('backend', [{ port: 9 }], { lbPolicy: 'CLUSTER_PROVIDED' })] };
  assert.throws(
    () => constructDataPlane(provided, 'bad.yaml', () => silentLogger),
    (e: unknown) =>
      e instanceof ConfigError &&
      e.message ===
        "bad.yaml: static_resources.clusters[0].lb_policy: cluster manager: cluster provided LB specified but cluster 'backend' did not provide one. Check cluster documentation.",
  );
});
