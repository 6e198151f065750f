// An RDS subscription's handling of each update, whatever the transport (Envoy's
// RdsRouteConfigSubscription): exactly its resource, checked; new content goes to the workers
// (config_reload), the same content does not; an update without it counts update_empty; a bad one
// throws (the transport NACKs it) and what served keeps serving; the first update or failure
// ends the server's wait for it.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FieldError } from '../../src/config/errors';
import type { JsonObject } from '../../src/config/json';
import type { RouteConfiguration } from '../../src/config/model';
import { RdsSubscription } from '../../src/rds/rds_subscription';
import { createHeapStatsStore } from '../../src/stats/store';
import { silentLogger } from '../helpers/data_plane';
import { subscriptionFactory } from '../helpers/subscriptions';

const LAST_UPDATED = new Date('2026-01-02T03:04:05.678Z');

function setup() {
  const store = createHeapStatsStore();
  const updates: RouteConfiguration[] = [];
  const subscription = new RdsSubscription({
    rds: { configSource: { kind: 'path', path: '/unused', initialFetchTimeoutMs: 15_000, resourceApiVersion: 'V3' }, routeConfigName: 'routes' },
    subscriptions: subscriptionFactory(store, silentLogger),
    stats: store.scope('http.in.rds.routes'),
    // What the supervisor's loader reports: a field error at a path within the resource.
    load: (resource: JsonObject) => {
      if (resource['bad'] === true) throw new FieldError('virtual_hosts[0].domains[1]', 'a domain named twice');
      return { name: String(resource['name']), virtualHosts: [] };
    },
    onUpdate: (config) => updates.push(config),
    log: silentLogger,
    now: () => LAST_UPDATED,
  });
  const stat = (name: string) => store.snapshot().get(`http.in.rds.routes.${name}`);
  return { subscription, updates, stat };
}

const resource = (fields: JsonObject = {}) => ({ name: 'routes', resource: { name: 'routes', ...fields } });

test('new content reloads, the same content does not, an update without the resource keeps what serves', async () => {
  const { subscription, updates, stat } = setup();
  let initialized = false;
  void subscription.initialized.then(() => (initialized = true));
  subscription.onConfigUpdate([], 'v0');
  await Promise.resolve();
  assert.equal(initialized, true, 'an empty first update ends the wait, as in Envoy');
  assert.equal(stat('update_empty'), 1);
  assert.equal(subscription.current(), null);

  subscription.onConfigUpdate([resource({ validate_clusters: false })], 'v1');
  assert.equal(updates.length, 1);
  assert.equal(stat('config_reload'), 1);
  assert.deepEqual(subscription.current(), { config: updates[0], source: { name: 'routes', validate_clusters: false }, versionInfo: 'v1', lastUpdated: LAST_UPDATED });

  subscription.onConfigUpdate([resource({ validate_clusters: false })], 'v2');
  assert.equal(updates.length, 1, 'the same content goes nowhere');
  assert.equal(stat('config_reload'), 1);
  assert.equal(subscription.current()!.versionInfo, 'v1', 'the version is the one that brought the content');

  subscription.onConfigUpdate([resource()], 'v3');
  assert.equal(updates.length, 2);
  assert.equal(stat('config_reload'), 2);
  assert.equal(subscription.current()!.versionInfo, 'v3');
});

test('a bad update throws with the field path and Envoy words; what served keeps serving', () => {
  const { subscription, updates, stat } = setup();
  subscription.onConfigUpdate([resource()], 'v1');
  assert.throws(() => subscription.onConfigUpdate([resource({ bad: true })], 'v2'), {
    message: 'Error updating route configuration routes: virtual_hosts[0].domains[1]: a domain named twice',
  });
  assert.throws(() => subscription.onConfigUpdate([{ name: 'other', resource: { name: 'other' } }], 'v3'), {
    message: 'Unexpected RDS configuration (expecting routes): other',
  });
  assert.throws(() => subscription.onConfigUpdate([resource(), resource()], 'v4'), { message: 'Unexpected RDS resource length: 2' });
  assert.equal(updates.length, 1);
  assert.equal(subscription.current()!.versionInfo, 'v1');
  assert.equal(stat('config_reload'), 1);
});

test('a failed first update ends the wait too', async () => {
  const { subscription } = setup();
  subscription.onConfigUpdateFailed('fetch_timeout', null);
  await subscription.initialized;
  assert.equal(subscription.current(), null);
});
