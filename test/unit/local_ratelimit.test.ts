// proxy.filters.http.local_ratelimit: the token bucket on an injected clock, and its
// typed_config as loading models it or refuses it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, ConfigErrors } from '../../src/config/errors';
import { loadBootstrap } from '../../src/config/load';
import { TokenBucket } from '../../src/filters/http/token_bucket';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';
import { Json, v3Bootstrap } from '../helpers/config_fixtures';
import { ManualClock } from '../helpers/manual_clock';

const RATE_LIMIT_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit';
const HCM_PATH = 'static_resources.listeners[1].filter_chains[0].filters[0].typed_config';

/** How many of `n` requests get a token now. */
const taken = (bucket: TokenBucket, n: number): number => Array.from({ length: n }, () => bucket.take()).filter(Boolean).length;

test('a bucket starts full, gives a token per request, and gains tokens_per_fill each fill_interval up to max_tokens', () => {
  const clock = new ManualClock();
  clock.advance(12_345);
  const bucket = new TokenBucket({ maxTokens: 3, tokensPerFill: 2, fillIntervalMs: 100 }, clock);
  assert.equal(taken(bucket, 5), 3);
  clock.advance(99);
  assert.equal(taken(bucket, 1), 0);
  clock.advance(1);
  assert.equal(taken(bucket, 5), 2);
  // Three fills missed add no more than max_tokens.
  clock.advance(350);
  assert.equal(taken(bucket, 5), 3);
  // Fills count from the bucket's start, not from the last request: 50 ms later is the 5th fill.
  clock.advance(50);
  assert.equal(taken(bucket, 5), 2);
  // A token left over stays: one fill later 1 + 2 (within max_tokens).
  clock.advance(100);
  assert.equal(taken(bucket, 1), 1);
  clock.advance(100);
  assert.equal(taken(bucket, 5), 3);
});

test('a bucket without a fill interval never fills (a config without token_bucket: no tokens at all)', () => {
  const clock = new ManualClock();
  const empty = new TokenBucket({ maxTokens: 0, tokensPerFill: 1, fillIntervalMs: 0 }, clock);
  assert.equal(taken(empty, 3), 0);
  clock.advance(60_000);
  assert.equal(taken(empty, 3), 0);
});

function loadWith(filter: Json) {
  const bootstrap = v3Bootstrap();
  bootstrap.static_resources.listeners[1].filter_chains[0].filters[0].typed_config.http_filters.unshift(filter);
  return loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify(bootstrap), allowUnknownStaticFields: false });
}

const filterOf = (config: Json): Json => ({ name: 'envoy.filters.http.local_ratelimit', typed_config: { '@type': RATE_LIMIT_TYPE, ...config } });

test("its typed_config: Envoy's defaults, the status of its replies, its headers", () => {
  const model = (config: Json) => {
    const hcm = loadWith(filterOf(config)).bootstrap.listeners[1]!.filterChains[0]!.filters[0]!;
    assert.ok(hcm.kind === 'http_connection_manager');
    return hcm.httpFilters[0]!.localRateLimit;
  };
  // Without a bucket Envoy's has no tokens; without filter_enabled the filter does nothing.
  assert.deepEqual(model({ stat_prefix: 'edge' }), { statPrefix: 'edge', status: 429, tokenBucket: { maxTokens: 0, tokensPerFill: 1, fillIntervalMs: 0 }, responseHeaders: [] });
  const full = model({
    stat_prefix: 'edge',
    status: { code: 'ServiceUnavailable' },
    token_bucket: { max_tokens: 10, tokens_per_fill: 4, fill_interval: '0.05s' },
    filter_enabled: { runtime_key: 'rl.enabled', default_value: { numerator: 50 } },
    filter_enforced: { default_value: { numerator: 100, denominator: 'TEN_THOUSAND' } },
    response_headers_to_add: [
      { header: { key: 'X-Limited', value: 'one' } },
      { header: { key: 'x-limited', value: 'two' } },
      { header: { key: 'x-percent', value: '100%%' }, append: false },
      { header: { key: 'x-replaced', value: 'old' } },
      { header: { key: 'x-replaced', value: 'new' }, append: false },
      { header: { key: 'x-empty', value: '' } },
      // The local reply's own, which Envoy sets after these.
      { header: { key: 'content-type', value: 'text/html' }, append: false },
    ],
  });
  assert.deepEqual(full, {
    statPrefix: 'edge',
    status: 503,
    tokenBucket: { maxTokens: 10, tokensPerFill: 4, fillIntervalMs: 50 },
    filterEnabled: { runtimeKey: 'rl.enabled', defaultValue: { numerator: 50, denominator: 'HUNDRED' } },
    filterEnforced: { runtimeKey: '', defaultValue: { numerator: 100, denominator: 'TEN_THOUSAND' } },
    responseHeaders: ['x-limited', 'one', 'x-limited', 'two', 'x-percent', '100%', 'x-replaced', 'new'],
  });
  // A status under 400 is no error: Envoy answers 429.
  assert.equal(model({ stat_prefix: 'edge', status: { code: 'OK' } })?.status, 429);
});

test('typed_config errors carry the field path', () => {
  const at = `${HCM_PATH}.http_filters[0].typed_config`;
  const bucket = { max_tokens: 1, fill_interval: '1s' };
  const cases: Array<[Json, string]> = [
    [{}, `${at}.stat_prefix: value length must be at least 1 runes`],
    [{ stat_prefix: 'x', token_bucket: { max_tokens: 1, fill_interval: '0.049s' } }, `${at}.token_bucket.fill_interval: local rate limit token bucket fill timer must be >= 50ms`],
    [{ stat_prefix: 'x', token_bucket: { max_tokens: 0, fill_interval: '1s' } }, `${at}.token_bucket.max_tokens: value must be greater than 0`],
    [{ stat_prefix: 'x', token_bucket: { max_tokens: 1 } }, `${at}.token_bucket.fill_interval: value is required`],
    [{ stat_prefix: 'x', token_bucket: bucket, response_headers_to_add: [{ header: { key: ':status', value: '1' } }] }, `${at}.response_headers_to_add[0].header.key: :-prefixed headers may not be modified`],
    [
      { stat_prefix: 'x', token_bucket: bucket, response_headers_to_add: [{ header: { key: 'x-client', value: '%DOWNSTREAM_REMOTE_ADDRESS%' } }] },
      `${at}.response_headers_to_add[0].header.value: only literal text is supported here by this build (a %VARIABLE% needs the stream context the local reply is made without)`,
    ],
    [{ stat_prefix: 'x', token_bucket: bucket, response_headers_to_add: [{ header: { key: 'x', value: '50%' } }] }, `${at}.response_headers_to_add[0].header.value: Invalid header configuration. Un-escaped % at position 2`],
  ];
  for (const [config, message] of cases) {
    assert.throws(() => loadWith(filterOf(config)), (e: unknown) => e instanceof ConfigError && e.message === `--config-yaml: ${message}`, message);
  }
});

test('fields newer than Envoy 1.16 are refused by field path', () => {
  const at = `${HCM_PATH}.http_filters[0].typed_config`;
  const later = { descriptors: [{ entries: [{ key: 'a', value: 'b' }], token_bucket: { max_tokens: 1, fill_interval: '1s' } }], request_headers_to_add_when_not_enforced: [{ header: { key: 'x', value: 'y' } }] };
  try {
    loadWith(filterOf({ stat_prefix: 'x', ...later }));
    assert.fail('loaded');
  } catch (e) {
    assert.ok(e instanceof ConfigErrors || e instanceof ConfigError);
    const paths = e instanceof ConfigErrors ? e.all.map((f) => f.fieldPath) : [e.fieldPath];
    assert.deepEqual(paths.sort(), [`${at}.descriptors`, `${at}.request_headers_to_add_when_not_enforced`]);
  }
});
