// The protos' validation rules (protoc-gen-validate), enforced by the loader with PGV's wording.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, ConfigErrors, FieldError } from '../../src/config/errors';
import { loadBootstrap } from '../../src/config/load';
import { protoSchema } from '../../src/config/schema';
import { durationText } from '../../src/config/validation/proto_rule_checks';
import { checkProtoRules } from '../../src/config/validation/proto_rules';
import { Json, v3Bootstrap } from '../helpers/config_fixtures';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';

const BACKEND = 'static_resources.clusters[0]';
const WEB = 'static_resources.clusters[1]';
const HCM = 'static_resources.listeners[1].filter_chains[0].filters[0].typed_config';

const backend = (b: Json): Json => b.static_resources.clusters[0];
const web = (b: Json): Json => b.static_resources.clusters[1];
const hcm = (b: Json): Json => b.static_resources.listeners[1].filter_chains[0].filters[0].typed_config;

function loadError(change: (bootstrap: Json) => void): string {
  const bootstrap = v3Bootstrap();
  change(bootstrap);
  try {
    loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify(bootstrap), bootstrapVersion: 3, allowUnknownStaticFields: false });
  } catch (e) {
    assert.ok(e instanceof ConfigError);
    return e.message.replace(/^--config-yaml: /, '');
  }
  return 'loaded';
}

test('each rule kind refuses its value at the field path, in PGV\'s words', () => {
  const cases: [string, (b: Json) => void, string][] = [
    ['duration gt 0s: zero', (b) => (backend(b).connect_timeout = '0s'), `${BACKEND}.connect_timeout: value must be greater than 0s`],
    ['duration gt 0s: negative', (b) => (backend(b).connect_timeout = '-1s'), `${BACKEND}.connect_timeout: value must be greater than 0s`],
    ['uint32 wrapper gte', (b) => (web(b).least_request_lb_config = { choice_count: 1 }), `${WEB}.least_request_lb_config.choice_count: value must be greater than or equal to 2`],
    [
      'uint64 wrapper lte',
      (b) => Object.assign(web(b), { lb_policy: 'RING_HASH', ring_hash_lb_config: { maximum_ring_size: '8388609' } }),
      `${WEB}.ring_hash_lb_config.maximum_ring_size: value must be less than or equal to 8388608`,
    ],
    [
      'double range in a nested message',
      (b) => (web(b).common_lb_config = { healthy_panic_threshold: { value: 101 } }),
      `${WEB}.common_lb_config.healthy_panic_threshold.value: value must be inside range [0, 100]`,
    ],
    ['string min_len, unset', (b) => delete web(b).name, `${WEB}.name: value length must be at least 1 runes`],
    ['string min_len, empty', (b) => (web(b).name = ''), `${WEB}.name: value length must be at least 1 runes`],
    ['repeated min_items', (b) => (hcm(b).route_config.virtual_hosts[0].domains = []), `${HCM}.route_config.virtual_hosts[0].domains: value must contain at least 1 item(s)`],
    [
      'repeated items: header name',
      (b) => (hcm(b).route_config.virtual_hosts[0].request_headers_to_remove = ['x-ok', 'bad\nname']),
      `${HCM}.route_config.virtual_hosts[0].request_headers_to_remove[1]: value must be a valid HTTP header name`,
    ],
    ['message required', (b) => delete hcm(b).route_config.virtual_hosts[0].routes[1].match, `${HCM}.route_config.virtual_hosts[0].routes[1].match: value is required`],
    [
      'oneof required',
      (b) => delete hcm(b).route_config.virtual_hosts[0].routes[1].route,
      `${HCM}.route_config.virtual_hosts[0].routes[1].action: is required: set one of route, redirect, direct_response, filter_action, non_forwarding_action`,
    ],
    ['duration range', (b) => (b.stats_flush_interval = '300s'), 'stats_flush_interval: value must be inside range [1ms, 5m0s)'],
    ['duration gt 1ms', (b) => (web(b).dns_failure_refresh_rate = { base_interval: '0.001s' }), `${WEB}.dns_failure_refresh_rate.base_interval: value must be greater than 1ms`],
    ["duration gte 1ms (the spec's rule over the proto's gt)", (b) => (web(b).dns_refresh_rate = '0.000999s'), `${WEB}.dns_refresh_rate: value must be greater than or equal to 1ms`],
    ['duration required', (b) => (web(b).dns_failure_refresh_rate = { max_interval: '5s' }), `${WEB}.dns_failure_refresh_rate.base_interval: value is required`],
    ['uint32 lte', (b) => (b.admin.address.socket_address.port_value = 70000), 'admin.address.socket_address.port_value: value must be less than or equal to 65535'],
    ['string max_bytes in a typed_config', (b) => (backend(b).transport_socket.typed_config.sni = 'x'.repeat(256)), `${BACKEND}.transport_socket.typed_config.sni: value length must be at most 255 bytes`],
    ['double gte in a nested message', (b) => (web(b).common_lb_config = { healthy_panic_threshold: { value: -1 } }), `${WEB}.common_lb_config.healthy_panic_threshold.value: value must be inside range [0, 100]`],
  ];
  for (const [name, change, error] of cases) assert.equal(loadError(change), error, name);
});

test('values within the rules load, and oneof members unset are not checked', () => {
  assert.equal(loadError((b) => (backend(b).connect_timeout = '0.000000001s')), 'loaded');
  assert.equal(loadError((b) => (web(b).least_request_lb_config = { choice_count: 2 })), 'loaded');
  assert.equal(loadError((b) => (web(b).common_lb_config = { healthy_panic_threshold: { value: 100 } })), 'loaded');
  // RING_HASH's minimum_ring_size above maximum_ring_size is Envoy's check, not the protos'.
  assert.equal(
    loadError((b) => Object.assign(web(b), { lb_policy: 'RING_HASH', ring_hash_lb_config: { minimum_ring_size: '8388608', maximum_ring_size: '8388608' } })),
    'loaded',
  );
});

test('every broken resource is reported, each at its first broken rule', () => {
  const bootstrap = v3Bootstrap();
  backend(bootstrap).connect_timeout = '-1s';
  web(bootstrap).name = '';
  web(bootstrap).connect_timeout = '0s';
  assert.throws(
    () => loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify(bootstrap), allowUnknownStaticFields: false }),
    (e: unknown) => {
      assert.ok(e instanceof ConfigErrors);
      assert.deepEqual(
        e.all.map((one) => `${one.fieldPath}: ${one.reason}`),
        [`${BACKEND}.connect_timeout: value must be greater than 0s`, `${WEB}.name: value length must be at least 1 runes`],
      );
      return true;
    },
  );
});

test('rules decoding cannot reach: enum defined_only, bool const, repeated unique', () => {
  const schema = protoSchema();
  const check = (bootstrap: Json) => () => checkProtoRules(schema, bootstrap);
  const cluster = { name: 'c', lb_policy: 'NO_SUCH_POLICY' };
  assert.throws(check({ static_resources: { clusters: [cluster] } }), new FieldError(`${BACKEND}.lb_policy`, 'value must be one of the defined enum values'));
  assert.throws(check({ stats_flush_on_admin: false }), new FieldError('stats_flush_on_admin', 'value must equal true'));
  const buckets = { histogram_bucket_settings: [{ match: { exact: 'a' }, buckets: [1, 2, 1] }] };
  assert.throws(check({ stats_config: buckets }), new FieldError('stats_config.histogram_bucket_settings[0].buckets[2]', 'repeated value must contain unique items'));
  assert.doesNotThrow(check({}));
});

test('durations are spelled as PGV spells them', () => {
  const cases: [bigint, string][] = [
    [0n, '0s'],
    [1_000_000n, '1ms'],
    [1_500_000_000n, '1.5s'],
    [300_000_000_000n, '5m0s'],
    [3_723_000_000_000n, '1h2m3s'],
    [-1_000_000_000n, '-1s'],
    [1_500n, '1.5µs'],
  ];
  for (const [nanos, text] of cases) assert.equal(durationText(nanos), text);
});
