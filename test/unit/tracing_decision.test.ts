// The trace decision as Envoy 1.16 makes it: the mark in the x-request-id UUID, the samplings
// (runtime features with the configured percentages as defaults, random and overall sampling
// drawn from the request id itself), and the reason each request is counted under.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FractionalPercent } from '../../src/config/model';
import { Runtime } from '../../src/runtime/runtime';
import { requestIdModulo, TraceStatus, traceStatusOf, withTraceStatus } from '../../src/tracing/trace_status';
import { markedRequestId, tracingDecision, TracingReason, type TracingSamplings } from '../../src/tracing/tracing_decision';

const UUID = '2c5bf0a6-5a7b-4c3e-9d1f-0123456789ab';
const ALL: FractionalPercent = { numerator: 100, denominator: 'HUNDRED' };
const NONE: FractionalPercent = { numerator: 0, denominator: 'HUNDRED' };
const SAMPLINGS: TracingSamplings = { clientSampling: ALL, randomSampling: { numerator: 10_000, denominator: 'TEN_THOUSAND' }, overallSampling: ALL };
const NO_RUNTIME = new Runtime([]);
const PLAIN = { clientTraceId: false, forceTrace: false };

test('the trace status is the UUID version digit: 4 none, a sampled, b client, 9 forced', () => {
  assert.equal(traceStatusOf(UUID), TraceStatus.NoTrace);
  assert.equal(withTraceStatus(UUID, TraceStatus.Sampled), '2c5bf0a6-5a7b-ac3e-9d1f-0123456789ab');
  assert.equal(traceStatusOf(withTraceStatus(UUID, TraceStatus.Client)), TraceStatus.Client);
  assert.equal(traceStatusOf(withTraceStatus(UUID, TraceStatus.Forced)), TraceStatus.Forced);
  assert.equal(withTraceStatus(withTraceStatus(UUID, TraceStatus.Forced), TraceStatus.NoTrace), UUID);
  // Not a UUID: never traced, never marked.
  assert.equal(traceStatusOf('abc'), TraceStatus.NoTrace);
  assert.equal(withTraceStatus('abc', TraceStatus.Sampled), 'abc');
});

test("the request id's draw is its first 8 hex digits modulo the range", () => {
  assert.equal(requestIdModulo(UUID, 10_000), 0x2c5bf0a6 % 10_000);
  assert.equal(requestIdModulo('zzzzzzzz-rest', 10_000), null);
  assert.equal(requestIdModulo('1234567', 10_000), null);
});

test('random sampling marks a request sampled; 0% leaves it; a runtime override decides over the configuration', () => {
  assert.equal(markedRequestId(UUID, SAMPLINGS, PLAIN, NO_RUNTIME, 0)[14], 'a');
  const none = { ...SAMPLINGS, randomSampling: { numerator: 0, denominator: 'TEN_THOUSAND' as const } };
  assert.equal(markedRequestId(UUID, none, PLAIN, NO_RUNTIME, 0), UUID);
  // The draw (0x2c5bf0a6 % 10000 = 2886) against 2887 of 10000: in; against 2886: out.
  const draw = requestIdModulo(UUID, 10_000)!;
  const at = (numerator: number) => ({ ...SAMPLINGS, randomSampling: { numerator, denominator: 'TEN_THOUSAND' as const } });
  assert.equal(markedRequestId(UUID, at(draw + 1), PLAIN, NO_RUNTIME, 0)[14], 'a');
  assert.equal(markedRequestId(UUID, at(draw), PLAIN, NO_RUNTIME, 0)[14], '4');
  assert.equal(markedRequestId(UUID, SAMPLINGS, PLAIN, new Runtime([['tracing.random_sampling', '0']]), 0), UUID);
});

test("a client's x-client-trace-id wins over a force, which wins over random sampling; client_sampling draws at random", () => {
  const none = { ...SAMPLINGS, randomSampling: { numerator: 0, denominator: 'TEN_THOUSAND' as const } };
  assert.equal(markedRequestId(UUID, none, { clientTraceId: true, forceTrace: true }, NO_RUNTIME, 0)[14], 'b');
  assert.equal(markedRequestId(UUID, none, { clientTraceId: false, forceTrace: true }, NO_RUNTIME, 0)[14], '9');
  // Client sampling at 50%: a draw of 49 is in, 50 is out (and then the force decides).
  const half = { ...none, clientSampling: { numerator: 50, denominator: 'HUNDRED' as const } };
  assert.equal(markedRequestId(UUID, half, { clientTraceId: true, forceTrace: false }, NO_RUNTIME, 49)[14], 'b');
  assert.equal(markedRequestId(UUID, half, { clientTraceId: true, forceTrace: true }, NO_RUNTIME, 50)[14], '9');
  assert.equal(markedRequestId(UUID, half, { clientTraceId: true, forceTrace: false }, new Runtime([['tracing.client_enabled', '0']]), 0), UUID);
});

test('a request marked before us keeps its mark, unless overall sampling takes every mark away', () => {
  const forced = withTraceStatus(UUID, TraceStatus.Forced);
  assert.equal(markedRequestId(forced, SAMPLINGS, PLAIN, NO_RUNTIME, 0), forced);
  assert.equal(markedRequestId(forced, { ...SAMPLINGS, overallSampling: NONE }, PLAIN, NO_RUNTIME, 0), UUID);
  assert.equal(markedRequestId(forced, SAMPLINGS, PLAIN, new Runtime([['tracing.global_enabled', '0']]), 0), UUID);
  // A request id that is no UUID with a hex start is left alone.
  assert.equal(markedRequestId('not-a-uuid', SAMPLINGS, PLAIN, NO_RUNTIME, 0), 'not-a-uuid');
});

test('the decision and its reason follow the mark; a health check is never traced', () => {
  assert.deepEqual(tracingDecision(withTraceStatus(UUID, TraceStatus.Sampled), false), { reason: TracingReason.Sampling, traced: true });
  assert.deepEqual(tracingDecision(withTraceStatus(UUID, TraceStatus.Client), false), { reason: TracingReason.ClientForced, traced: true });
  assert.deepEqual(tracingDecision(withTraceStatus(UUID, TraceStatus.Forced), false), { reason: TracingReason.ServiceForced, traced: true });
  assert.deepEqual(tracingDecision(UUID, false), { reason: TracingReason.NotTraceable, traced: false });
  assert.deepEqual(tracingDecision(undefined, false), { reason: TracingReason.NotTraceable, traced: false });
  assert.deepEqual(tracingDecision(withTraceStatus(UUID, TraceStatus.Forced), true), { reason: TracingReason.HealthCheck, traced: false });
});
