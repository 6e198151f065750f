import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { HeaderMatch, Route, VirtualCluster, VirtualHost } from '../../src/config/model';
import { RouteTable } from '../../src/filters/http/route_table';
import { VirtualClusters } from '../../src/filters/http/virtual_clusters';
import { RequestHead } from '../../src/http/message';
import { LiveRuntime } from '../../src/runtime/live_runtime';
import { createHeapStatsStore } from '../../src/stats/store';

const exact = (name: string, value: string): HeaderMatch => ({ name, invert: false, specifier: { kind: 'exact', value } });
const prefix = (name: string, value: string): HeaderMatch => ({ name, invert: false, specifier: { kind: 'prefix', value } });

function request(method: string, path: string, authority = 'api.example.com', headers: string[] = []): RequestHead {
  const head = new RequestHead(method, path, false);
  head.authority = authority;
  head.headers.push(...headers);
  return head;
}

/** The name of the virtual cluster `head` is counted under, read from its stats' names. */
function matched(clusters: VirtualClusters, head: RequestHead): string {
  return clusters.match(head).upstream_rq_total.name.replace(/^vhost\.api\.vcluster\./, '').replace(/\.upstream_rq_total$/, '');
}

const CLUSTERS: VirtualCluster[] = [
  { name: 'create_user', headers: [exact(':method', 'POST'), prefix(':path', '/users')] },
  { name: 'users', headers: [prefix(':path', '/users')] },
  { name: 'rides', headers: [{ name: ':path', invert: false, specifier: { kind: 'safe_regex', regex: '/rides/\\d+' } }] },
  { name: 'tenant', headers: [exact(':authority', 'tenant.example.com'), exact('x-tenant', 'blue')] },
];

test('the first virtual cluster whose matchers all match is the one; none is the catch-all, other', () => {
  const clusters = new VirtualClusters(CLUSTERS, createHeapStatsStore().scope('vhost').scope('api.vcluster'));
  assert.equal(matched(clusters, request('POST', '/users/7')), 'create_user');
  // Every matcher must hold: a GET falls to the next virtual cluster that takes it.
  assert.equal(matched(clusters, request('GET', '/users/7')), 'users');
  // :path is the whole request target, query string included, as Envoy's header matchers see it.
  assert.equal(matched(clusters, request('GET', '/rides/123')), 'rides');
  assert.equal(matched(clusters, request('GET', '/rides/123?x=1')), 'other');
  assert.equal(matched(clusters, request('GET', '/rides/123/456')), 'other');
  assert.equal(matched(clusters, request('GET', '/tenant', 'tenant.example.com', ['x-tenant', 'blue'])), 'tenant');
  assert.equal(matched(clusters, request('GET', '/tenant', 'tenant.example.com', ['x-tenant', 'green'])), 'other');
  assert.equal(matched(clusters, request('GET', '/tenant', 'api.example.com', ['x-tenant', 'blue'])), 'other');
});

function vhost(name: string, domains: string[], virtualClusters?: VirtualCluster[]): VirtualHost {
  const route: Route = {
    name,
    match: { prefix: '/', caseSensitive: true, headers: [], queryParameters: [], grpc: false },
    action: { kind: 'route', cluster: name, timeoutMs: 15000, priority: 'DEFAULT' },
  };
  return { name, domains, routes: [route], requireTls: 'NONE', ...(virtualClusters !== undefined ? { virtualClusters } : {}) };
}

const FACTS = { forwardedProto: () => 'http', isInternal: () => false, peerCertificate: () => null };

test("the route table gives a request the virtual cluster of its route's virtual host, null for one without", () => {
  const store = createHeapStatsStore();
  const table = new RouteTable(
    { name: 'rc', virtualHosts: [vhost('api', ['api.example.com'], CLUSTERS), vhost('web', ['*'])] },
    new LiveRuntime([]),
    () => 0,
    store.scope('vhost'),
  );
  const head = request('POST', '/users');
  const route = table.route(head, FACTS)!;
  assert.equal(table.virtualCluster(route, head)!.upstream_rq_total.name, 'vhost.api.vcluster.create_user.upstream_rq_total');
  const other = request('GET', '/');
  assert.equal(table.virtualCluster(table.route(other, FACTS)!, other)!.upstream_rq_total.name, 'vhost.api.vcluster.other.upstream_rq_total');
  const elsewhere = request('POST', '/users', 'www.example.com');
  assert.equal(table.virtualCluster(table.route(elsewhere, FACTS)!, elsewhere), null);

  // As in Envoy 1.16, each virtual host has its catch-all's counters, and each virtual cluster its
  // own, at 0 from the start; response codes and times come with the first charge.
  const names = [...store.snapshot().keys()].filter((name) => name.startsWith('vhost.')).sort();
  const counters = ['upstream_rq_retry', 'upstream_rq_retry_limit_exceeded', 'upstream_rq_retry_overflow', 'upstream_rq_retry_success', 'upstream_rq_timeout', 'upstream_rq_total'];
  const expected = [
    ...['create_user', 'other', 'rides', 'tenant', 'users'].flatMap((cluster) => counters.map((counter) => `vhost.api.vcluster.${cluster}.${counter}`)),
    ...counters.map((counter) => `vhost.web.vcluster.other.${counter}`),
  ];
  assert.deepEqual(names, expected);
  for (const name of names) assert.equal(store.snapshot().get(name), 0, name);
});

test("a virtual cluster's response codes and request time are made as they are charged", () => {
  const store = createHeapStatsStore();
  const stats = new VirtualClusters(CLUSTERS, store.scope('vhost.api.vcluster')).match(request('GET', '/users'));
  stats.chargeResponseCode(200);
  stats.chargeResponseCode(200);
  stats.chargeResponseCode(503);
  stats.recordRequestTime(12);
  const values = store.snapshot();
  assert.equal(values.get('vhost.api.vcluster.users.upstream_rq_completed'), 3);
  assert.equal(values.get('vhost.api.vcluster.users.upstream_rq_2xx'), 2);
  assert.equal(values.get('vhost.api.vcluster.users.upstream_rq_200'), 2);
  assert.equal(values.get('vhost.api.vcluster.users.upstream_rq_5xx'), 1);
  assert.equal(values.get('vhost.api.vcluster.users.upstream_rq_503'), 1);
  assert.equal(values.has('vhost.api.vcluster.users.upstream_rq_4xx'), false);
  assert.equal(values.has('vhost.api.vcluster.other.upstream_rq_completed'), false);
  assert.deepEqual(
    store.reader.histograms().map((h) => h.name),
    ['vhost.api.vcluster.users.upstream_rq_time'],
  );
});
