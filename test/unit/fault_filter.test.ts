// The fault filter's pure parts: what a request's headers make of header-controlled settings, the
// response rate limiter on a manual clock, and HTTPFault's model and errors by field path.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../src/config/errors';
import { loadBootstrap } from '../../src/config/load';
import type { FaultAbort, FaultDelay } from '../../src/config/model';
import { builtinExtensions } from '../../src/extensions/builtin_extensions';
import { faultConfig } from '../../src/extensions/http/fault';
import { FaultSettings } from '../../src/filters/http/fault';
import { abortGrpcStatus, abortHttpStatus, abortPercentage, delayMs, delayPercentage, rateKbps } from '../../src/filters/http/fault_providers';
import { StreamRateLimiter } from '../../src/filters/http/stream_rate_limiter';
import { Runtime } from '../../src/runtime/runtime';
import { type Json, v3Bootstrap } from '../helpers/config_fixtures';
import { ManualClock } from '../helpers/manual_clock';

const HALF = { numerator: 50, denominator: 'HUNDRED' } as const;

test('header-controlled settings read the request; fixed ones ignore it', () => {
  const headerAbort: FaultAbort = { kind: 'header', status: 0, percentage: HALF };
  assert.equal(abortHttpStatus(headerAbort, ['x-proxy-fault-abort-request', '503']), 503);
  assert.equal(abortHttpStatus(headerAbort, ['x-proxy-fault-abort-request', '199']), null);
  assert.equal(abortHttpStatus(headerAbort, ['x-proxy-fault-abort-request', 'x']), null);
  assert.equal(abortGrpcStatus(headerAbort, ['x-proxy-fault-abort-grpc-request', '14']), 14);
  // The header's percentage is capped by the configured one, over its denominator.
  assert.deepEqual(abortPercentage(headerAbort, ['x-proxy-fault-abort-request-percentage', '80']), HALF);
  assert.deepEqual(abortPercentage(headerAbort, ['x-proxy-fault-abort-request-percentage', '20']), { numerator: 20, denominator: 'HUNDRED' });
  assert.deepEqual(abortPercentage(headerAbort, []), HALF);

  const fixedAbort: FaultAbort = { kind: 'http', status: 418, percentage: HALF };
  assert.equal(abortHttpStatus(fixedAbort, ['x-proxy-fault-abort-request', '503']), 418);
  assert.equal(abortGrpcStatus(fixedAbort, ['x-proxy-fault-abort-grpc-request', '14']), null);
  assert.deepEqual(abortPercentage(fixedAbort, ['x-proxy-fault-abort-request-percentage', '20']), HALF);

  const headerDelay: FaultDelay = { fixedMs: null, percentage: HALF };
  assert.equal(delayMs(headerDelay, ['x-proxy-fault-delay-request', '250']), 250);
  assert.equal(delayMs(headerDelay, []), null);
  assert.deepEqual(delayPercentage(headerDelay, ['x-proxy-fault-delay-request-percentage', '1']), { numerator: 1, denominator: 'HUNDRED' });
  assert.equal(delayMs({ fixedMs: 40, percentage: HALF }, ['x-proxy-fault-delay-request', '250']), 40);

  assert.equal(rateKbps({ fixedKbps: null, percentage: HALF }, ['x-proxy-fault-throughput-response', '8']), 8);
  assert.equal(rateKbps({ fixedKbps: null, percentage: HALF }, ['x-proxy-fault-throughput-response', '0']), null);
  assert.equal(rateKbps({ fixedKbps: 2, percentage: HALF }, []), 2);
});

test('the rate limiter lets a second out at once, then a sixteenth a sixteenth of a second, and ends after the last slice', () => {
  const clock = new ManualClock();
  const written: number[] = [];
  const events: string[] = [];
  const limiter = new StreamRateLimiter(1, 1500, clock, {
    write: (chunk) => written.push(chunk.length),
    onDrained: () => events.push('drained'),
    onWatermark: (above) => events.push(above ? 'above' : 'below'),
  });
  limiter.writeData(Buffer.alloc(2048));
  assert.deepEqual(events, ['above']);
  assert.equal(limiter.end(), false);
  clock.advance(0);
  assert.deepEqual(written, [1024]);
  // 1024 still held: over half the limit.
  assert.deepEqual(events, ['above']);
  clock.advance(1000);
  assert.equal(written.reduce((a, b) => a + b, 0), 2048);
  assert.ok(written.slice(1).every((n) => n <= 64 * 2), `slices ${written.join(',')}`);
  assert.deepEqual(events, ['above', 'below', 'drained']);
  limiter.destroy();
});

const HCM_PATH = 'static_resources.listeners[1].filter_chains[0].filters[0].typed_config';
const FAULT_TYPE = 'type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault';

function loadWithFault(config: Json, name = 'envoy.filters.http.fault'): ReturnType<typeof loadBootstrap> {
  const bootstrap = v3Bootstrap();
  bootstrap.static_resources.listeners[1].filter_chains[0].filters[0].typed_config.http_filters.unshift({ name, typed_config: { '@type': FAULT_TYPE, ...config } });
  return loadBootstrap({ extensions: builtinExtensions(), configYaml: JSON.stringify(bootstrap), allowUnknownStaticFields: false });
}

test('settings at 0% inject nothing until the runtime has a key that could turn a fault on; worked out again per snapshot', () => {
  const off = new FaultSettings(faultConfig({ abort: { http_status: 503, percentage: { numerator: 0 } }, delay: { header_delay: {}, percentage: { numerator: 0 } }, abort_percent_runtime: 'my.abort' }));
  assert.equal(off.injectsNothingUnder(new Runtime([])), true);
  assert.equal(off.injectsNothingUnder(new Runtime([['upstream.x', '1']])), true);
  // The settings' own keys, Envoy's default ones included, and any downstream cluster's.
  assert.equal(off.injectsNothingUnder(new Runtime([['my.abort', '100']])), false);
  assert.equal(off.injectsNothingUnder(new Runtime([['fault.http.delay.fixed_delay_percent', '1']])), false);
  assert.equal(off.injectsNothingUnder(new Runtime([['fault.http.edge.abort.abort_percent', '100']])), false);
  // The same snapshot keeps its answer; a new one is asked again.
  const quiet = new Runtime([]);
  assert.equal(off.injectsNothingUnder(quiet), true);
  assert.equal(off.injectsNothingUnder(quiet), true);
  assert.equal(off.injectsNothingUnder(new Runtime([['my.abort', '5']])), false);
  // A percentage above 0 anywhere may fault a request whatever the runtime says.
  assert.equal(new FaultSettings(faultConfig({ abort: { http_status: 503, percentage: { numerator: 0 } }, response_rate_limit: { fixed_limit: { limit_kbps: 1 }, percentage: { numerator: 1 } } })).injectsNothingUnder(quiet), false);
  assert.equal(new FaultSettings(faultConfig({ delay: { fixed_delay: '1s', percentage: { numerator: 1, denominator: 'MILLION' } } })).injectsNothingUnder(quiet), false);
});

test('HTTPFault: the model with Envoy 1.16 defaults, under every name it has', () => {
  for (const name of ['envoy.fault', 'envoy.filters.http.fault', 'proxy.filters.http.fault']) {
    const hcm = loadWithFault(
      {
        delay: { fixed_delay: '1.5s', percentage: { numerator: 10 } },
        abort: { grpc_status: 14 },
        headers: [{ name: 'x-f', present_match: true }],
        max_active_faults: 3,
        response_rate_limit: { fixed_limit: { limit_kbps: 64 }, percentage: { numerator: 5, denominator: 'TEN_THOUSAND' } },
        abort_percent_runtime: 'my.abort',
      },
      name,
    ).bootstrap.listeners[1]!.filterChains[0]!.filters[0]!;
    assert.ok(hcm.kind === 'http_connection_manager');
    assert.deepEqual(hcm.httpFilters[0], {
      name: 'proxy.filters.http.fault',
      fault: {
        delay: { fixedMs: 1500, percentage: { numerator: 10, denominator: 'HUNDRED' } },
        abort: { kind: 'grpc', status: 14, percentage: { numerator: 0, denominator: 'HUNDRED' } },
        upstreamCluster: '',
        headers: [{ name: 'x-f', invert: false, specifier: { kind: 'present' } }],
        downstreamNodes: [],
        maxActiveFaults: 3,
        responseRateLimit: { fixedKbps: 64, percentage: { numerator: 5, denominator: 'TEN_THOUSAND' } },
        runtimeKeys: {
          delayPercent: 'fault.http.delay.fixed_delay_percent',
          abortPercent: 'my.abort',
          delayDuration: 'fault.http.delay.fixed_duration_ms',
          abortHttpStatus: 'fault.http.abort.http_status',
          abortGrpcStatus: 'fault.http.abort.grpc_status',
          maxActiveFaults: 'fault.http.max_active_faults',
          responseRateLimitPercent: 'fault.http.rate_limit.response_percent',
        },
        disableDownstreamClusterStats: false,
      },
    });
  }
});

test('HTTPFault errors carry the field path', () => {
  const at = `${HCM_PATH}.http_filters[0].typed_config`;
  const cases: [Json, RegExp][] = [
    [{ abort: { http_status: 600 } }, new RegExp(`^--config-yaml: ${escape(at)}\\.abort\\.http_status: value must be`)],
    [{ abort: { percentage: { numerator: 1 } } }, new RegExp(`^--config-yaml: ${escape(at)}\\.abort`)],
    [{ response_rate_limit: { fixed_limit: { limit_kbps: 0 } } }, new RegExp(`^--config-yaml: ${escape(at)}\\.response_rate_limit\\.fixed_limit\\.limit_kbps`)],
    [{ headers: [{ name: 'a', safe_regex_match: { google_re2: {}, regex: '(a' } }] }, new RegExp(`^--config-yaml: ${escape(at)}\\.headers\\[0\\]\\.safe_regex_match\\.regex`)],
    [{ filter_metadata: {} }, new RegExp(`${escape(at)}\\.filter_metadata`)],
  ];
  for (const [config, error] of cases) {
    assert.throws(() => loadWithFault(config), (e: unknown) => {
      assert.ok(e instanceof Error, String(error));
      assert.match(e.message, error);
      return e instanceof ConfigError || e.name === 'ConfigErrors';
    });
  }
});

function escape(text: string): string {
  return text.replace(/[.[\]]/g, (c) => `\\${c}`);
}
