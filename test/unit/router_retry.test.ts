import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../src/config/errors';
import { loadBootstrap } from '../../src/config/load';
import type { ClusterRouteAction, RetryPolicy } from '../../src/config/model';
import { JitteredBackOff } from '../../src/common/jittered_backoff';
import {
  parseRetryOn,
  RETRY_ON_5XX,
  RETRY_ON_CONNECT_FAILURE,
  RETRY_ON_GATEWAY_ERROR,
  RETRY_ON_RESET,
  RETRY_ON_RETRIABLE_4XX,
  RETRY_ON_RETRIABLE_STATUS_CODES,
  RETRY_ON_REFUSED_STREAM,
  wouldRetryFromReset,
  wouldRetryFromStatus,
} from '../../src/filters/http/retry_on';
import { RetryState, RetryStatus, type RetryCounters } from '../../src/filters/http/retry_state';
import type { Counter } from '../../src/stats/stats';
import type { Resource } from '../../src/upstream/shared/resource_manager';
import { Json, v3Bootstrap } from '../helpers/config_fixtures';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';

test('retry_on: the names Envoy 1.16 spells, unknown ones reported, spaces and empty names skipped', () => {
  const parsed = parseRetryOn(' 5xx,gateway-error,, connect-failure ,retriable-4xx,reset,retriable-status-codes,refused-stream,retriable-headers,bogus');
  assert.equal(
    parsed.flags,
    RETRY_ON_5XX | RETRY_ON_GATEWAY_ERROR | RETRY_ON_CONNECT_FAILURE | RETRY_ON_RETRIABLE_4XX | RETRY_ON_RESET | RETRY_ON_RETRIABLE_STATUS_CODES | RETRY_ON_REFUSED_STREAM,
  );
  assert.deepEqual(parsed.unknown, ['retriable-headers', 'bogus']);
});

test('retriable statuses: 5xx any 5xx, gateway-error 502-504, retriable-4xx 409 only, listed codes; never when rate limited', () => {
  const cases: Array<[number, number, boolean]> = [
    [RETRY_ON_5XX, 500, true],
    [RETRY_ON_5XX, 503, true],
    [RETRY_ON_5XX, 599, true],
    [RETRY_ON_5XX, 404, false],
    [RETRY_ON_GATEWAY_ERROR, 500, false],
    [RETRY_ON_GATEWAY_ERROR, 502, true],
    [RETRY_ON_GATEWAY_ERROR, 504, true],
    [RETRY_ON_RETRIABLE_4XX, 409, true],
    [RETRY_ON_RETRIABLE_4XX, 429, false],
    [RETRY_ON_RETRIABLE_STATUS_CODES, 418, true],
    [RETRY_ON_RETRIABLE_STATUS_CODES, 419, false],
    [RETRY_ON_CONNECT_FAILURE | RETRY_ON_RESET, 503, false],
    [RETRY_ON_5XX, 200, false],
  ];
  for (const [retryOn, status, expected] of cases) {
    assert.equal(wouldRetryFromStatus(retryOn, [418], status, false), expected, `${retryOn} ${status}`);
  }
  assert.equal(wouldRetryFromStatus(RETRY_ON_5XX, [], 503, true), false);
});

test('retriable resets: reset, 5xx and gateway-error take any; connect-failure only a failed connect; overflow never', () => {
  for (const retryOn of [RETRY_ON_RESET, RETRY_ON_5XX, RETRY_ON_GATEWAY_ERROR]) {
    for (const reason of ['connection failure', 'connection termination', 'local reset', 'remote reset'] as const) {
      assert.equal(wouldRetryFromReset(retryOn, reason), true, `${retryOn} ${reason}`);
    }
    assert.equal(wouldRetryFromReset(retryOn, 'overflow'), false);
  }
  assert.equal(wouldRetryFromReset(RETRY_ON_CONNECT_FAILURE, 'connection failure'), true);
  assert.equal(wouldRetryFromReset(RETRY_ON_CONNECT_FAILURE, 'connection termination'), false);
  // A timed out try is a local reset: not retried under connect-failure or the 4xx/status conditions.
  assert.equal(wouldRetryFromReset(RETRY_ON_CONNECT_FAILURE | RETRY_ON_RETRIABLE_4XX | RETRY_ON_RETRIABLE_STATUS_CODES, 'local reset'), false);
});

/** A random source that returns the given values in turn. */
function sequence(...values: number[]): () => number {
  let i = 0;
  return () => values[i++ % values.length];
}

test('back-off: drawn below (2^n - 1) x base, the range growing until past the max, capped at the max', () => {
  const max = 0xffffffff;
  const backOff = new JitteredBackOff(25, 250, sequence(max, max, max, max, 7, 7));
  // Ranges 25, 75, 175, 375 (past 250: stops growing); the largest draw is range - 1, capped at 250.
  assert.equal(backOff.nextMs(), max % 25);
  assert.equal(backOff.nextMs(), max % 75);
  assert.equal(backOff.nextMs(), max % 175);
  assert.equal(backOff.nextMs(), Math.min(max % 375, 250));
  assert.equal(backOff.nextMs(), 7);
  assert.equal(backOff.nextMs(), 7);
  const seeded = new JitteredBackOff(10, 1000, sequence(123456789));
  for (let i = 0; i < 20; i++) assert.ok(seeded.nextMs() <= 1000);
});

class CountingCounter {
  value = 0;
  inc(): void {
    this.value++;
  }
}

function counters(): RetryCounters & Record<string, CountingCounter> {
  const make = () => new CountingCounter() as unknown as Counter & CountingCounter;
  return { upstream_rq_retry: make(), upstream_rq_retry_success: make(), upstream_rq_retry_overflow: make(), upstream_rq_retry_limit_exceeded: make() };
}

/** A retries resource with a limit, counting what is open. */
function retries(limit: number): Resource & { open: number } {
  return {
    open: 0,
    canCreate() { return this.open < limit; },
    tryAcquire() { if (this.open >= limit) return false; this.open++; return true; },
    inc() { this.open++; },
    release(n = 1) { this.open -= n; },
    max: () => limit,
    count() { return this.open; },
  };
}

const POLICY: RetryPolicy = {
  retryOn: RETRY_ON_5XX,
  numRetries: 2,
  perTryTimeoutMs: 0,
  retriableStatusCodes: [],
  avoidPreviousHosts: false,
  hostSelectionRetryMaxAttempts: 0,
  baseIntervalMs: 25,
  maxIntervalMs: 250,
};
const NO_HEADERS = { retryOn: null, maxRetries: null, retriableStatusCodes: null };

test('retry state: retries up to num_retries, holding one circuit-breaker retry each, then limit exceeded', () => {
  const c = counters();
  const resource = retries(3);
  const state = RetryState.create(POLICY, NO_HEADERS, c, null, resource, sequence(30))!;
  assert.equal(state.shouldRetry(true), RetryStatus.Yes);
  assert.equal(state.delayMs, 5);
  assert.equal(resource.open, 1);
  assert.equal(state.shouldRetry(true), RetryStatus.Yes);
  assert.equal(state.delayMs, 30);
  assert.equal(resource.open, 1, 'the previous retry was given back');
  assert.equal(state.shouldRetry(true), RetryStatus.LimitExceeded);
  assert.equal(resource.open, 0);
  assert.equal(c.upstream_rq_retry.value, 2);
  assert.equal(c.upstream_rq_retry_limit_exceeded.value, 1);
  assert.equal(c.upstream_rq_retry_success.value, 0);
});

test('retry state: a good outcome after a retry counts a success; a full circuit breaker an overflow', () => {
  const c = counters();
  const state = RetryState.create(POLICY, NO_HEADERS, c, null, retries(1), sequence(0))!;
  assert.equal(state.shouldRetry(true), RetryStatus.Yes);
  assert.equal(state.shouldRetry(false), RetryStatus.No);
  assert.equal(c.upstream_rq_retry_success.value, 1);
  const full = retries(0);
  const refused = RetryState.create(POLICY, NO_HEADERS, c, null, full, sequence(0))!;
  assert.equal(refused.shouldRetry(true), RetryStatus.Overflow);
  assert.equal(c.upstream_rq_retry_overflow.value, 1);
  assert.equal(full.open, 0);
});

test('retry state: the virtual cluster counts every retry decision alongside the cluster', () => {
  const c = counters();
  const v = counters();
  const state = RetryState.create(POLICY, NO_HEADERS, c, v, retries(1), sequence(0))!;
  assert.equal(state.shouldRetry(true), RetryStatus.Yes);
  assert.equal(state.shouldRetry(false), RetryStatus.No);
  const limited = RetryState.create({ ...POLICY, numRetries: 0 }, NO_HEADERS, c, v, retries(1), sequence(0))!;
  assert.equal(limited.shouldRetry(true), RetryStatus.LimitExceeded);
  const refused = RetryState.create(POLICY, NO_HEADERS, c, v, retries(0), sequence(0))!;
  assert.equal(refused.shouldRetry(true), RetryStatus.Overflow);
  for (const counts of [c, v]) {
    assert.equal(counts.upstream_rq_retry.value, 1);
    assert.equal(counts.upstream_rq_retry_success.value, 1);
    assert.equal(counts.upstream_rq_retry_limit_exceeded.value, 1);
    assert.equal(counts.upstream_rq_retry_overflow.value, 1);
  }
});

test('retry state: none without conditions; headers add conditions, codes and override num_retries only with conditions', () => {
  const c = counters();
  assert.equal(RetryState.create(undefined, NO_HEADERS, c, null, retries(3), sequence(0)), null);
  assert.equal(RetryState.create(undefined, { ...NO_HEADERS, maxRetries: '5' }, c, null, retries(3), sequence(0)), null);
  const fromHeaders = RetryState.create(undefined, { retryOn: 'retriable-status-codes,bogus', maxRetries: '0', retriableStatusCodes: '418, x' }, c, null, retries(3), sequence(0))!;
  assert.equal(fromHeaders.retryOn, RETRY_ON_RETRIABLE_STATUS_CODES);
  assert.deepEqual(fromHeaders.retriableStatusCodes, [418]);
  assert.equal(fromHeaders.shouldRetry(true), RetryStatus.LimitExceeded);
  // Without a policy Envoy allows one retry.
  const defaults = RetryState.create(undefined, { ...NO_HEADERS, retryOn: '5xx' }, c, null, retries(3), sequence(0))!;
  assert.equal(defaults.shouldRetry(true), RetryStatus.Yes);
  assert.equal(defaults.shouldRetry(true), RetryStatus.LimitExceeded);
  const merged = RetryState.create(POLICY, { ...NO_HEADERS, retryOn: 'reset' }, c, null, retries(3), sequence(0))!;
  assert.equal(merged.retryOn, RETRY_ON_5XX | RETRY_ON_RESET);
});

// ---- configuration ------------------------------------------------------------------------

const HCM = 'static_resources.listeners[1].filter_chains[0].filters[0]';
const HOST = `${HCM}.typed_config.route_config.virtual_hosts[0]`;
const hostOf = (b: Json): Json => b.static_resources.listeners[1].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0];

function bootstrapWith(routeRetry: Json | undefined, hostRetry?: Json): Json {
  const bootstrap = v3Bootstrap();
  const host = hostOf(bootstrap);
  host.routes[1].route = { cluster: 'web:v1', ...(routeRetry === undefined ? {} : { retry_policy: routeRetry }) };
  if (hostRetry !== undefined) host.retry_policy = hostRetry;
  for (const cluster of bootstrap.static_resources.clusters) {
    cluster.lb_policy = 'ROUND_ROBIN';
    delete cluster.transport_socket;
    delete cluster.ignore_health_on_host_removal;
  }
  return bootstrap;
}

function load(bootstrap: Json) {
  const loaded = loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify(bootstrap), bootstrapVersion: 3, allowUnknownStaticFields: false });
  return loaded;
}

function actionOf(bootstrap: Json): ClusterRouteAction {
  const filter = load(bootstrap).bootstrap.listeners[1].filterChains[0].filters[0];
  assert.ok(filter.kind === 'http_connection_manager');
  const action = filter.routeConfig.virtualHosts[0].routes[1].action;
  assert.ok(action.kind === 'route');
  return action;
}

function loadError(bootstrap: Json): string {
  try {
    load(bootstrap);
  } catch (e) {
    assert.ok(e instanceof ConfigError, String(e));
    return e.message;
  }
  assert.fail('the configuration loaded');
}

test('retry_policy: every field read, with Envoy defaults (one retry, 25 ms base, 10x max)', () => {
  const full = actionOf(
    bootstrapWith({
      retry_on: '5xx,connect-failure,retriable-status-codes',
      num_retries: 3,
      per_try_timeout: '0.250s',
      retry_host_predicate: [{ name: 'envoy.retry_host_predicates.previous_hosts' }],
      host_selection_retry_max_attempts: '5',
      retriable_status_codes: [418, 429],
      retry_back_off: { base_interval: '0.010s', max_interval: '0.500s' },
    }),
  );
  assert.deepEqual(full.retryPolicy, {
    retryOn: RETRY_ON_5XX | RETRY_ON_CONNECT_FAILURE | RETRY_ON_RETRIABLE_STATUS_CODES,
    numRetries: 3,
    perTryTimeoutMs: 250,
    retriableStatusCodes: [418, 429],
    avoidPreviousHosts: true,
    hostSelectionRetryMaxAttempts: 5,
    baseIntervalMs: 10,
    maxIntervalMs: 500,
  });
  const defaults = actionOf(bootstrapWith({ retry_on: 'reset' }));
  assert.deepEqual(defaults.retryPolicy, { ...POLICY, retryOn: RETRY_ON_RESET, numRetries: 1 });
  const typed = actionOf(
    bootstrapWith({ retry_on: '5xx', retry_host_predicate: [{ name: 'x', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.retry.host.previous_hosts.v3.PreviousHostsPredicate' } }] }),
  );
  assert.equal(typed.retryPolicy?.avoidPreviousHosts, true);
  const subMs = actionOf(bootstrapWith({ retry_on: '5xx', retry_back_off: { base_interval: '0.000100s' } }));
  assert.equal(subMs.retryPolicy?.baseIntervalMs, 1);
  assert.equal(subMs.retryPolicy?.maxIntervalMs, 10);
});

test("retry_policy: the virtual host's applies to routes without one; a route's replaces it entirely", () => {
  const inherited = actionOf(bootstrapWith(undefined, { retry_on: 'gateway-error', num_retries: 4 }));
  assert.equal(inherited.retryPolicy?.retryOn, RETRY_ON_GATEWAY_ERROR);
  assert.equal(inherited.retryPolicy?.numRetries, 4);
  const own = actionOf(bootstrapWith({ retry_on: 'reset' }, { retry_on: 'gateway-error', num_retries: 4 }));
  assert.equal(own.retryPolicy?.retryOn, RETRY_ON_RESET);
  assert.equal(own.retryPolicy?.numRetries, 1);
  assert.equal(actionOf(bootstrapWith(undefined)).retryPolicy, undefined);
});

test('retry_policy: what this build does not honor is refused by field path', () => {
  const route = `${HOST}.routes[1].route.retry_policy`;
  assert.match(loadError(bootstrapWith({ retry_on: '5xx,retriable-headers' })), new RegExp(`${escape(route)}\\.retry_on: 'retriable-headers' is not implemented`));
  assert.match(loadError(bootstrapWith({ retry_on: '5xx,typo' })), /retry_on: 'typo' is not a retry condition/);
  assert.match(loadError(bootstrapWith({ retry_on: '5xx', retry_priority: { name: 'envoy.retry_priorities.previous_priorities' } })), new RegExp(`${escape(route)}\\.retry_priority`));
  assert.match(loadError(bootstrapWith({ retry_on: '5xx', retriable_headers: [{ name: 'x' }] })), /retry_policy\.retriable_headers/);
  assert.match(loadError(bootstrapWith({ retry_on: '5xx', retry_host_predicate: [{ name: 'envoy.retry_host_predicates.omit_canary_hosts' }] })), /retry_host_predicate\[0\]\.name: Didn't find a registered implementation/);
  assert.match(loadError(bootstrapWith({ retry_on: '5xx', retry_back_off: { base_interval: '1s', max_interval: '0.5s' } })), /max_interval must be greater than or equal to the base_interval/);
  assert.match(loadError(bootstrapWith(undefined, { retry_on: 'cancelled' })), new RegExp(`${escape(HOST)}\\.retry_policy\\.retry_on`));
  assert.match(loadError(bootstrapWith({ retry_on: '5xx', per_try_timeout: '-1s' })), /per_try_timeout/);
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
