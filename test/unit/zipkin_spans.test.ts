// Zipkin spans as the tracer makes them (a new trace, a shared context, a child span, egress)
// and as the collector gets them: Zipkin v2 JSON with integer microsecond times, Envoy's
// `shared` mark on server spans, tags and the stream events of a verbose span.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ZipkinTracerConfig } from '../../src/config/model';
import { RequestHead } from '../../src/http/message';
import { LiveRuntime } from '../../src/runtime/live_runtime';
import { NamingStatsStore } from '../../src/stats/naming_store';
import type { Span } from '../../src/tracing/tracer';
import { zipkinJsonV2 } from '../../src/tracing/zipkin/zipkin_json';
import { ZipkinSpan } from '../../src/tracing/zipkin/zipkin_span';
import { ZipkinTracer } from '../../src/tracing/zipkin/zipkin_tracer';
import { AsyncClient } from '../../src/upstream/worker/async_client';
import { ClusterManager } from '../../src/upstream/worker/cluster_manager';
import { silentLogger } from '../helpers/data_plane';
import { ManualClock } from '../helpers/manual_clock';

const CONFIG: ZipkinTracerConfig = {
  kind: 'zipkin',
  name: 'proxy.tracers.zipkin',
  collectorCluster: 'zipkin',
  collectorEndpoint: '/api/v2/spans',
  collectorHostname: 'zipkin',
  traceId128Bit: false,
  sharedSpanContext: true,
};

/** A tracer whose random draws count up from 1, and the spans it reports. */
function tracerOf(config: Partial<ZipkinTracerConfig> = {}): { tracer: ZipkinTracer; close(): void } {
  const store = new NamingStatsStore();
  const runtime = new LiveRuntime([]);
  const clock = new ManualClock();
  let draw = 0;
  const tracer = new ZipkinTracer(
    { ...CONFIG, ...config },
    {
      clusters: new ClusterManager({ configs: [], snapshots: [], store, runtime, log: () => silentLogger }),
      asyncClient: new AsyncClient({ clock, localAddress: undefined }),
      clock,
      runtime,
      random: () => ++draw,
      stats: store,
      node: { id: 'n', cluster: 'edge', locality: { region: '', zone: '', subZone: '' } },
      localAddress: undefined,
    },
  );
  return { tracer, close: () => tracer.close() };
}

function head(headers: string[] = []): RequestHead {
  const request = new RequestHead('GET', '/', false);
  request.authority = 'shop.example';
  request.headers.push(...headers);
  return request;
}

const asZipkin = (span: Span | null): ZipkinSpan => span as ZipkinSpan;

test('a request without context starts a trace: a root SERVER span named after the host, its id the trace id', () => {
  const { tracer, close } = tracerOf();
  const span = asZipkin(tracer.startSpan(head(), 'ingress', true, 1_000_000));
  assert.deepEqual(span.context, { traceIdHigh: null, traceId: '0000000100000002', spanId: '0000000100000002', parentId: null, sampled: true });
  assert.equal(span.kind, 'SERVER');
  assert.equal(span.name, 'shop.example');
  const wideTracer = tracerOf({ traceId128Bit: true });
  const wide = asZipkin(wideTracer.tracer.startSpan(head(), 'egress', false, 0));
  assert.deepEqual(wide.context, { traceIdHigh: '0000000300000004', traceId: '0000000100000002', spanId: '0000000100000002', parentId: null, sampled: false });
  assert.equal(wide.kind, 'CLIENT');
  close();
  wideTracer.close();
});

test("a shared context keeps the caller's ids; without one, or on egress, the span is the caller's child", () => {
  const caller = ['x-b3-traceid', '463ac35c9f6413ad', 'x-b3-spanid', 'a2fb4a1d1a96d312', 'x-b3-parentspanid', '0020000000000001', 'x-b3-sampled', '1'];
  const shared = tracerOf();
  const server = asZipkin(shared.tracer.startSpan(head(caller), 'ingress', false, 0));
  assert.deepEqual(server.context, { traceIdHigh: null, traceId: '463ac35c9f6413ad', spanId: 'a2fb4a1d1a96d312', parentId: '0020000000000001', sampled: true });
  const egress = asZipkin(shared.tracer.startSpan(head(caller), 'egress', false, 0));
  assert.deepEqual(egress.context, { traceIdHigh: null, traceId: '463ac35c9f6413ad', spanId: '0000000100000002', parentId: 'a2fb4a1d1a96d312', sampled: true });
  assert.equal(egress.kind, 'CLIENT');
  const own = tracerOf({ sharedSpanContext: false });
  const child = asZipkin(own.tracer.startSpan(head(caller), 'ingress', false, 0));
  assert.deepEqual(child.context, { traceIdHigh: null, traceId: '463ac35c9f6413ad', spanId: '0000000100000002', parentId: 'a2fb4a1d1a96d312', sampled: true });
  assert.equal(child.kind, 'SERVER');
  // A malformed context: no span at all.
  assert.equal(own.tracer.startSpan(head(['x-b3-traceid', 'xyz', 'x-b3-spanid', '1']), 'ingress', true, 0), null);
  shared.close();
  own.close();
});

test('only a sampled span is reported when it finishes', () => {
  const reported: ZipkinSpan[] = [];
  const context = { traceIdHigh: null, traceId: '1111111111111111', spanId: '1111111111111111', parentId: null };
  new ZipkinSpan({ ...context, sampled: false }, 'SERVER', 0, 'a', (s) => reported.push(s)).finish(10);
  const sampled = new ZipkinSpan({ ...context, sampled: true }, 'SERVER', 0, 'b', (s) => reported.push(s));
  sampled.finish(10);
  assert.deepEqual(reported, [sampled]);
});

test('Zipkin v2 JSON: ids, kind, integer microseconds, endpoint, tags, annotations, and shared on server spans', () => {
  const server = new ZipkinSpan({ traceIdHigh: '80f198ee56343ba8', traceId: '64fe8b2a57d3eff7', spanId: 'e457b5a2e4d86bd1', parentId: '05e3ac9a4f6e3b90', sampled: true }, 'SERVER', 1_600_000_000_123_456.25, 'shop.example', () => undefined);
  server.setOperation('checkout');
  server.setTag('http.method', 'GET');
  server.setTag('empty', '');
  server.setTag('http.method', 'POST');
  server.log(1_600_000_000_124_000.75, 'last_downstream_rx_byte_received');
  server.finish(1523.7);
  const client = new ZipkinSpan({ traceIdHigh: null, traceId: '64fe8b2a57d3eff7', spanId: '64fe8b2a57d3eff7', parentId: null, sampled: true }, 'CLIENT', 5, 'egress', () => undefined);
  client.finish(1);
  const json = JSON.parse(zipkinJsonV2([server, client], { serviceName: 'edge', address: '10.1.2.3' }, true));
  assert.deepEqual(json, [
    {
      traceId: '80f198ee56343ba864fe8b2a57d3eff7',
      parentId: '05e3ac9a4f6e3b90',
      id: 'e457b5a2e4d86bd1',
      name: 'checkout',
      kind: 'SERVER',
      timestamp: 1_600_000_000_123_456,
      duration: 1524,
      localEndpoint: { serviceName: 'edge', ipv4: '10.1.2.3', port: 0 },
      tags: { 'http.method': 'POST' },
      annotations: [{ timestamp: 1_600_000_000_124_001, value: 'last_downstream_rx_byte_received' }],
      shared: true,
    },
    { traceId: '64fe8b2a57d3eff7', id: '64fe8b2a57d3eff7', name: 'egress', kind: 'CLIENT', timestamp: 5, duration: 1, localEndpoint: { serviceName: 'edge', ipv4: '10.1.2.3', port: 0 } },
  ]);
  // No shared contexts, an IPv6 address, no service name.
  const [alone] = JSON.parse(zipkinJsonV2([server], { serviceName: '', address: 'fd00::1' }, false));
  assert.equal(alone.shared, undefined);
  assert.deepEqual(alone.localEndpoint, { ipv6: 'fd00::1', port: 0 });
});
