// What outlier detection configuration this build refuses by field path: fields newer than
// Envoy 1.16, and the cluster manager's event log, which it does not write.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, ConfigErrors } from '../../src/config/errors';
import type { Json } from '../helpers/config_fixtures';
import { loadBootstrap } from '../../src/config/load';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';

const ENDPOINT = { endpoint: { address: { socket_address: { address: '10.0.0.1', port_value: 80 } } } };

function refusedPaths(extra: Json, outlier: Json): string[] {
  const config = {
    ...extra,
    static_resources: { clusters: [{ name: 'c', connect_timeout: '1s', load_assignment: { cluster_name: 'c', endpoints: [{ lb_endpoints: [ENDPOINT] }] }, outlier_detection: outlier }] },
  };
  try {
    loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify(config), bootstrapVersion: 3, allowUnknownStaticFields: false });
    return [];
  } catch (e) {
    const all = e instanceof ConfigErrors ? e.all : e instanceof ConfigError ? [e] : [];
    if (all.length === 0) throw e;
    return all.map((f) => f.fieldPath);
  }
}

test('every outlier_detection field of Envoy 1.16 is accepted', () => {
  const all = {
    consecutive_5xx: 3,
    interval: '1s',
    base_ejection_time: '2s',
    max_ejection_percent: 50,
    enforcing_consecutive_5xx: 90,
    enforcing_success_rate: 80,
    success_rate_minimum_hosts: 3,
    success_rate_request_volume: 10,
    success_rate_stdev_factor: 1000,
    consecutive_gateway_failure: 4,
    enforcing_consecutive_gateway_failure: 70,
    split_external_local_origin_errors: true,
    consecutive_local_origin_failure: 6,
    enforcing_consecutive_local_origin_failure: 60,
    enforcing_local_origin_success_rate: 50,
    failure_percentage_threshold: 40,
    enforcing_failure_percentage: 30,
    enforcing_failure_percentage_local_origin: 20,
    failure_percentage_minimum_hosts: 2,
    failure_percentage_request_volume: 5,
  };
  assert.deepEqual(refusedPaths({}, all), []);
});

test('fields newer than 1.16 and the event log are refused by field path', () => {
  assert.deepEqual(refusedPaths({}, { max_ejection_time: '10s' }), ['static_resources.clusters[0].outlier_detection.max_ejection_time']);
  assert.deepEqual(refusedPaths({ cluster_manager: { outlier_detection: { event_log_path: '/tmp/outliers.log' } } }, {}), [
    'cluster_manager.outlier_detection',
  ]);
});
