// The clusters' state a worker starts from (src/server/worker_protocol.ts): the snapshots travel as
// JSON text and the cluster configs by V8's serialization; a worker decodes the same values.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ClusterConfig } from '../../src/config/model';
import type { ClusterSnapshot } from '../../src/upstream/shared/membership';
import { decodeWorkerClusterState, encodeWorkerClusterState, type WorkerClusterState } from '../../src/server/worker_protocol';

test('a worker decodes the snapshots and the cluster configs the supervisor encoded', () => {
  const host = {
    address: { address: '10.0.0.1', port: 8080 },
    hostname: 'backend.example',
    weight: 3,
    priority: 1,
    locality: { region: 'eu', zone: 'a', subZone: '' },
    localityWeight: 2,
    metadata: { 'proxy.lb': { canary: true, version: 'v2', shard: 7, tags: ['a', null] } },
    healthFlags: 5,
    slot: { slot: 12, generation: 3 },
  };
  const state: WorkerClusterState = {
    clusters: [
      { cluster: 'static', version: 2, hosts: [host, { ...host, address: { address: '::1', port: 80 }, logicalKey: 'backend.example:80' }], policy: { overprovisioningFactor: 140, dropOverload: null } },
      { cluster: 'empty', version: 0, hosts: [], policy: { overprovisioningFactor: 100, dropOverload: { numerator: 1, denominator: 'HUNDRED' } } },
    ],
    // V8's serialization keeps what JSON would not: Infinity, a Map.
    dynamicClusters: [{ name: 'cds', limit: Infinity, byName: new Map([['a', 1]]) } as unknown as ClusterConfig],
  };
  const decoded = decodeWorkerClusterState(encodeWorkerClusterState(state));
  // Each snapshot is read through its fields (parsed at the first read).
  const fields = (snapshot: ClusterSnapshot) => ({ cluster: snapshot.cluster, version: snapshot.version, hosts: snapshot.hosts, policy: snapshot.policy });
  assert.deepEqual(decoded.clusters.map(fields), state.clusters);
  assert.deepEqual(decoded.dynamicClusters, state.dynamicClusters);
});
