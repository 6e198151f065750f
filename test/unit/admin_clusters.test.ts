import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clusterStatuses, healthStatusJson } from '../../src/admin/clusters_handler';
import { renderClustersJson, renderClustersText } from '../../src/admin/clusters_text';
import { HealthFlag, healthFlagsString } from '../../src/upstream/shared/health_flags';
import type { ClusterSnapshot } from '../../src/upstream/shared/membership';
import { DEFAULT_POLICY } from '../helpers/membership';

const snapshot: ClusterSnapshot = {
  cluster: 'web',
  version: 3,
  policy: DEFAULT_POLICY,
  hosts: [
    {
      address: { address: '10.0.0.1', port: 80 },
      hostname: 'a.example',
      weight: 3,
      priority: 0,
      locality: { region: 'eu', zone: 'eu-1a', subZone: 'rack7' },
      localityWeight: 0,
      metadata: { 'proxy.lb': { canary: true } },
      healthFlags: 0,
      slot: { slot: 0, generation: 0 },
    },
    {
      address: { address: '::1', port: 81 },
      hostname: '',
      weight: 1,
      priority: 1,
      locality: { region: '', zone: '', subZone: '' },
      localityWeight: 0,
      metadata: {},
      healthFlags: HealthFlag.FAILED_ACTIVE_HC | HealthFlag.FAILED_EDS_HEALTH,
      slot: { slot: 1, generation: 0 },
    },
  ],
};

const stats = (slot: { slot: number }) =>
  slot.slot === 0
    ? { cx_active: 2, cx_connect_fail: 0, cx_total: 7, rq_active: 1, rq_error: 0, rq_success: 5, rq_timeout: 0, rq_total: 6 }
    : null;

const ENVOY_DEFAULTS = { maxConnections: 1024, maxPendingRequests: 1024, maxRequests: 1024, maxRetries: 3 };
const thresholds = (cluster: string) => (cluster === 'web' ? { default: ENVOY_DEFAULTS, high: { ...ENVOY_DEFAULTS, maxConnections: 7 } } : null);

test('text: thresholds of both priorities, added_via_api, then every host with Envoy 1.16 field names', () => {
  const text = renderClustersText('static', clusterStatuses([snapshot], stats, thresholds), healthFlagsString);
  const expected = [
    'version_info::static',
    'web::default_priority::max_connections::1024',
    'web::default_priority::max_pending_requests::1024',
    'web::default_priority::max_requests::1024',
    'web::default_priority::max_retries::3',
    'web::high_priority::max_connections::7',
    'web::high_priority::max_pending_requests::1024',
    'web::high_priority::max_requests::1024',
    'web::high_priority::max_retries::3',
    'web::added_via_api::false',
    'web::10.0.0.1:80::cx_active::2',
    'web::10.0.0.1:80::cx_connect_fail::0',
    'web::10.0.0.1:80::cx_total::7',
    'web::10.0.0.1:80::rq_active::1',
    'web::10.0.0.1:80::rq_error::0',
    'web::10.0.0.1:80::rq_success::5',
    'web::10.0.0.1:80::rq_timeout::0',
    'web::10.0.0.1:80::rq_total::6',
    'web::10.0.0.1:80::hostname::a.example',
    'web::10.0.0.1:80::health_flags::healthy',
    'web::10.0.0.1:80::weight::3',
    'web::10.0.0.1:80::region::eu',
    'web::10.0.0.1:80::zone::eu-1a',
    'web::10.0.0.1:80::sub_zone::rack7',
    'web::10.0.0.1:80::canary::true',
    'web::10.0.0.1:80::priority::0',
    'web::10.0.0.1:80::success_rate::-1.0',
    'web::10.0.0.1:80::local_origin_success_rate::-1.0',
  ];
  const lines = text.split('\n');
  assert.deepEqual(lines.slice(0, expected.length), expected);
  // A host whose slot is gone reads zeros; its flags in Envoy's order.
  assert.ok(lines.includes('web::[::1]:81::cx_total::0'));
  assert.ok(lines.includes('web::[::1]:81::health_flags::/failed_active_hc/failed_eds_health'));
  assert.ok(lines.includes('web::[::1]:81::priority::1'));
  assert.ok(text.endsWith('web::[::1]:81::local_origin_success_rate::-1.0\n'));
});

test('json: admin.v3.Clusters as Envoy pretty-prints it', () => {
  const json = renderClustersJson(clusterStatuses([snapshot], stats, thresholds), healthStatusJson);
  assert.match(json, /^\{\n "cluster_statuses": \[\n  \{\n   "name": "web",\n   "host_statuses": \[/);
  const body = JSON.parse(json);
  const [a, b] = body.cluster_statuses[0].host_statuses;
  assert.deepEqual(a, {
    address: { socket_address: { address: '10.0.0.1', port_value: 80 } },
    stats: [
      { name: 'cx_connect_fail' },
      { value: '7', name: 'cx_total' },
      { name: 'rq_error' },
      { value: '5', name: 'rq_success' },
      { name: 'rq_timeout' },
      { value: '6', name: 'rq_total' },
      { type: 'GAUGE', value: '2', name: 'cx_active' },
      { type: 'GAUGE', value: '1', name: 'rq_active' },
    ],
    health_status: { eds_health_status: 'HEALTHY' },
    weight: 3,
    hostname: 'a.example',
    locality: { region: 'eu', zone: 'eu-1a', sub_zone: 'rack7' },
  });
  assert.deepEqual(b.health_status, { failed_active_health_check: true, eds_health_status: 'UNHEALTHY' });
  assert.equal(b.priority, 1);
  assert.deepEqual(b.locality, {});
  assert.equal('hostname' in b, false);
  assert.equal('added_via_api' in body.cluster_statuses[0], false);
  assert.deepEqual(body.cluster_statuses[0].circuit_breakers.thresholds, [
    { max_connections: 1024, max_pending_requests: 1024, max_requests: 1024, max_retries: 3 },
    { priority: 'HIGH', max_connections: 7, max_pending_requests: 1024, max_requests: 1024, max_retries: 3 },
  ]);
});

test('health flag words and the EDS status follow Envoy', () => {
  assert.equal(healthFlagsString(0), 'healthy');
  assert.equal(healthFlagsString(HealthFlag.DEGRADED_EDS_HEALTH), '/degraded_eds_health');
  assert.equal(
    healthFlagsString(HealthFlag.PENDING_ACTIVE_HC | HealthFlag.FAILED_OUTLIER_CHECK | HealthFlag.FAILED_ACTIVE_HC),
    '/failed_active_hc/failed_outlier_check/pending_active_hc',
  );
  assert.deepEqual(healthStatusJson(HealthFlag.DEGRADED_EDS_HEALTH), { eds_health_status: 'DEGRADED' });
});
