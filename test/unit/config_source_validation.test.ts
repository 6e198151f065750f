import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as yaml from 'js-yaml';
import { checkCapabilities } from '../../src/config/capabilities';
import { FieldError } from '../../src/config/errors';
import type { JsonObject } from '../../src/config/json';
import { loadBootstrap } from '../../src/config/load';
import { configSourceContext, validateConfigSource, validateDynamicResources } from '../../src/config/validation/config_sources';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';

function bootstrap(extra: JsonObject = {}): JsonObject {
  return {
    node: { id: 'n', cluster: 'c' },
    static_resources: {
      clusters: [
        { name: 'xds', type: 'STATIC', load_assignment: { cluster_name: 'xds', endpoints: [] } },
        { name: 'eds', type: 'EDS' },
        { name: 'tls', type: 'STATIC', transport_socket: { name: 'proxy.transport_sockets.tls' } },
      ],
    },
    ...extra,
  };
}

const context = configSourceContext(bootstrap({ dynamic_resources: { ads_config: {} } }));
const noAds = configSourceContext(bootstrap());

test('API config sources: Envoy 1.16 load-time rules, by field path', () => {
  const grpc = (extra: JsonObject): JsonObject => ({ api_config_source: { api_type: 'GRPC', ...extra } });
  assert.doesNotThrow(() => validateConfigSource(grpc({ grpc_services: [{ envoy_grpc: { cluster_name: 'xds' } }] }), 'eds_config', context));
  assert.doesNotThrow(() => validateConfigSource(grpc({ grpc_services: [{ google_grpc: { target_uri: 'x:1', stat_prefix: 's' } }] }), 'eds_config', context));
  assert.throws(
    () => validateConfigSource(grpc({}), 'eds_config', context),
    new FieldError('eds_config.api_config_source', 'API configs must have either a gRPC service or a cluster name defined'),
  );
  assert.throws(
    () => validateConfigSource(grpc({ cluster_names: ['xds'] }), 'eds_config', context),
    new FieldError('eds_config.api_config_source.cluster_names', 'ApiConfigSource::(DELTA_)GRPC must not have a cluster name specified'),
  );
  const two = [{ envoy_grpc: { cluster_name: 'xds' } }, { envoy_grpc: { cluster_name: 'xds' } }];
  assert.throws(
    () => validateConfigSource(grpc({ grpc_services: two }), 'eds_config', context),
    new FieldError('eds_config.api_config_source.grpc_services', 'ApiConfigSource::(DELTA_)GRPC must have a single gRPC service specified'),
  );
  for (const name of ['missing', 'eds']) {
    assert.throws(
      () => validateConfigSource(grpc({ grpc_services: [{ envoy_grpc: { cluster_name: name } }] }), 'eds_config', context),
      new FieldError(
        'eds_config.api_config_source.grpc_services[0].envoy_grpc.cluster_name',
        `ApiConfigSource must have a statically defined non-EDS cluster: '${name}' does not exist, was added via api, or is an EDS cluster`,
      ),
    );
  }
  assert.throws(
    () => validateConfigSource(grpc({ grpc_services: [{ envoy_grpc: { cluster_name: 'tls' } }] }), 'eds_config', context),
    /grpc_services\[0\]\.envoy_grpc\.cluster_name: cluster 'tls' has a transport socket/,
  );
});

test('REST config sources need one cluster and a refresh_delay', () => {
  const rest = (extra: JsonObject): JsonObject => ({ api_config_source: { api_type: 'REST', ...extra } });
  assert.doesNotThrow(() => validateConfigSource(rest({ cluster_names: ['xds'], refresh_delay: '1s' }), 'p', context));
  assert.throws(
    () => validateConfigSource(rest({ cluster_names: ['xds', 'xds'], refresh_delay: '1s' }), 'p', context),
    new FieldError('p.api_config_source.cluster_names', 'ApiConfigSource must have a singleton cluster name specified'),
  );
  assert.throws(
    () => validateConfigSource(rest({ cluster_names: ['xds'] }), 'p', context),
    new FieldError('p.api_config_source.refresh_delay', 'refresh_delay is required for REST API configuration sources'),
  );
  assert.throws(
    () => validateConfigSource(rest({ cluster_names: ['xds'], refresh_delay: '1s', grpc_services: [{ envoy_grpc: { cluster_name: 'xds' } }] }), 'p', context),
    new FieldError('p.api_config_source.grpc_services', 'ApiConfigSource, if not a gRPC type, must not have a gRPC service specified'),
  );
  assert.throws(
    () => validateConfigSource(rest({ cluster_names: ['eds'], refresh_delay: '1s' }), 'p', context),
    new FieldError('p.api_config_source.cluster_names[0]', "ApiConfigSource must have a statically defined non-EDS cluster: 'eds' does not exist, was added via api, or is an EDS cluster"),
  );
});

test('an ads config source needs dynamic_resources.ads_config, which names a static cluster over gRPC', () => {
  assert.doesNotThrow(() => validateConfigSource({ ads: {} }, 'p', context));
  assert.throws(() => validateConfigSource({ ads: {} }, 'p', noAds), new FieldError('p.ads', 'ADS must be configured to support an ADS config source'));
  const ads = (config: JsonObject) => bootstrap({ dynamic_resources: { ads_config: config } });
  const check = (b: JsonObject) => validateDynamicResources(b, configSourceContext(b));
  assert.doesNotThrow(() => check(ads({ api_type: 'GRPC', grpc_services: [{ envoy_grpc: { cluster_name: 'xds' } }] })));
  assert.throws(
    () => check(ads({ api_type: 'GRPC', grpc_services: [{ envoy_grpc: { cluster_name: 'nope' } }] })),
    new FieldError('dynamic_resources.ads_config.grpc_services[0].envoy_grpc.cluster_name', "Unknown gRPC client cluster 'nope'"),
  );
  assert.throws(
    () => check(ads({ api_type: 'REST', cluster_names: ['xds'], refresh_delay: '1s' })),
    new FieldError('dynamic_resources.ads_config.api_type', 'ApiConfigSource type must be gRPC'),
  );
});

test('the capability check admits ads_config over GRPC and DELTA_GRPC and refuses what the xDS client would ignore', () => {
  const withAds = (config: JsonObject) => ({ dynamic_resources: { ads_config: config } });
  const service = { envoy_grpc: { cluster_name: 'xds' } };
  assert.doesNotThrow(() =>
    checkCapabilities(withAds({ api_type: 'GRPC', transport_api_version: 'V3', grpc_services: [service], set_node_on_first_message_only: true }), builtinExtensions()),
  );
  assert.doesNotThrow(() => checkCapabilities(withAds({ api_type: 'DELTA_GRPC', transport_api_version: 'V3', grpc_services: [service] }), builtinExtensions()));
  assert.throws(
    () => checkCapabilities(withAds({ api_type: 'AGGREGATED_DELTA_GRPC', grpc_services: [service] }), builtinExtensions()),
    /dynamic_resources\.ads_config\.api_type: api_type AGGREGATED_DELTA_GRPC is not implemented/,
  );
  assert.throws(() => checkCapabilities(withAds({ grpc_services: [service], rate_limit_settings: {} }), builtinExtensions()), /dynamic_resources\.ads_config\.rate_limit_settings/);
  assert.throws(() => checkCapabilities(withAds({ grpc_services: [{ ...service, timeout: '1s' }] }), builtinExtensions()), /grpc_services\[0\]\.timeout/);
  assert.throws(
    () => checkCapabilities(withAds({ grpc_services: [{ google_grpc: { target_uri: 'x:1', stat_prefix: 's', channel_credentials: {} } }] }), builtinExtensions()),
    /google_grpc\.channel_credentials/,
  );
  // LDS is a config source as CDS's: its own fields are checked the same way.
  assert.doesNotThrow(() => checkCapabilities({ dynamic_resources: { lds_config: { ads: {} } } }, builtinExtensions()));
  assert.throws(() => checkCapabilities({ dynamic_resources: { lds_config: { ads: {} }, lds_resources_locator: 'x' } }, builtinExtensions()), /dynamic_resources\.lds_resources_locator/);
});

test('a whole bootstrap: ads_config naming an unknown cluster fails to load with its path', () => {
  const b = bootstrap({ dynamic_resources: { ads_config: { api_type: 'GRPC', grpc_services: [{ envoy_grpc: { cluster_name: 'nope' } }] } } });
  const clusters = (b['static_resources'] as JsonObject)['clusters'] as JsonObject[];
  (b['static_resources'] as JsonObject)['clusters'] = clusters.slice(0, 1);
  assert.throws(() => loadBootstrap({ extensions: builtinExtensions(), configYaml: yaml.dump(b), allowUnknownStaticFields: false }), /dynamic_resources\.ads_config\.grpc_services\[0\]\.envoy_grpc\.cluster_name: Unknown gRPC client cluster 'nope'/);
});
