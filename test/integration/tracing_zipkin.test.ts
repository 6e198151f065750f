// HTTP tracing with Zipkin through the real binary, over HTTP/1.1 and h2c alike: the connection
// manager decides each request's trace in its x-request-id, its span continues the trace the
// request's B3 headers name (or starts one), the upstream gets B3 headers naming our span, and
// the span reaches a Zipkin collector written here (behind a static cluster) as Zipkin v2 JSON:
// ids, kind, microsecond times, Envoy's tags, the decorator's name. The reporter flushes each span
// at once (runtime tracing.zipkin.min_flush_spans 1), so a request's span is counted by the time
// its response arrives.

import assert from 'node:assert/strict';
import * as http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import { closeServer, listen, listenerClients, type RequestOptions, startUpstream, type Upstream } from '../helpers/http_peers';
import { type RunningProxy, startProxy, waitFor } from '../helpers/proxy_process';

const TIMEOUT = { timeout: 60_000 };
const ZIPKIN_TYPE = 'type.googleapis.com/envoy.config.trace.v3.ZipkinConfig';
const HEX16 = /^[0-9a-f]{16}$/;
const HEX32 = /^[0-9a-f]{32}$/;
const HOST = 'front.example:8080';

/** A Zipkin span as the v2 API carries it. */
interface ZipkinSpan {
  traceId: string;
  parentId?: string;
  id: string;
  name: string;
  kind: string;
  timestamp: number;
  duration: number;
  localEndpoint: Record<string, unknown>;
  tags?: Record<string, string>;
  annotations?: { timestamp: number; value: string }[];
  shared?: boolean;
}

/** A Zipkin collector: records every span POSTed to it and answers `status`. */
interface Collector {
  readonly port: number;
  readonly spans: ZipkinSpan[];
  readonly requests: { readonly method: string; readonly url: string; readonly headers: http.IncomingHttpHeaders }[];
  close(): Promise<void>;
}

async function startCollector(status: number): Promise<Collector> {
  const spans: ZipkinSpan[] = [];
  const requests: Collector['requests'][number][] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({ method: req.method!, url: req.url!, headers: req.headers });
      spans.push(...(JSON.parse(Buffer.concat(chunks).toString()) as ZipkinSpan[]));
      res.statusCode = status;
      res.end();
    });
  });
  const port = await listen(server);
  return { port, spans, requests, close: () => closeServer(server) };
}

const zipkin = (cluster: string, extra: object = {}) => ({
  name: 'envoy.tracers.zipkin',
  typed_config: { '@type': ZIPKIN_TYPE, collector_cluster: cluster, collector_endpoint: '/api/v2/spans', collector_endpoint_version: 'HTTP_JSON', ...extra },
});

const ROUTES = [
  { match: { prefix: '/decorated' }, route: { cluster: 'backend' }, decorator: { operation: 'checkout' } },
  { match: { prefix: '/broken' }, direct_response: { status: 503 } },
  { match: { prefix: '/route-sampled' }, route: { cluster: 'backend' }, tracing: { random_sampling: { numerator: 100 }, custom_tags: [{ tag: 'tenant', literal: { value: 'route' } }] } },
  { match: { prefix: '/' }, route: { cluster: 'backend' } },
];

const CUSTOM_TAGS = [
  { tag: 'tenant', request_header: { name: 'X-Tenant', default_value: 'none' } },
  { tag: 'region', environment: { name: 'TRACING_TEST_REGION', default_value: 'unset' } },
  { tag: 'team', literal: { value: 'edge' } },
];

describe('Zipkin tracing on HTTP/1.1 and h2c', TIMEOUT, () => {
  let backend: Upstream;
  let collector: Collector;
  let strict: Collector;
  let proxy: RunningProxy;
  const ports: Record<string, number> = {};

  before(async () => {
    // An upstream that names its operation when asked to, as a service behind an egress proxy may.
    backend = await startUpstream('backend', (req, res) => {
      const operation = req.headers['x-answer-operation'];
      if (typeof operation === 'string') res.setHeader('x-proxy-decorator-operation', operation);
      res.end('ok');
    });
    collector = await startCollector(202);
    strict = await startCollector(400);
    proxy = await startProxy(
      {
        node: { id: 'node-a', cluster: 'front-proxy', locality: { zone: 'zone-a' } },
        tracing: { http: zipkin('zipkin') },
        layered_runtime: { layers: [{ name: 'static', static_layer: { 'tracing.zipkin.min_flush_spans': 1 } }] },
        static_resources: {
          listeners: [
            // The bootstrap's tracer, contexts shared; every request sampled.
            httpListener('shared', 0, ROUTES, { tracing: { custom_tags: CUSTOM_TAGS } }),
            // A tracer of its own: child spans, 128-bit trace ids, a collector that refuses reports; verbose, short paths.
            httpListener('child', 0, ROUTES, {
              tracing: { verbose: true, max_path_tag_length: 4, provider: zipkin('zipkin-strict', { shared_span_context: false, trace_id_128bit: true }) },
            }),
            // Outbound: egress (client) spans.
            { ...httpListener('egress', 0, ROUTES, { tracing: {} }), traffic_direction: 'OUTBOUND' },
            // Nothing sampled at random: only what a client asks for, or a route samples.
            httpListener('sampling', 0, ROUTES, { use_remote_address: true, tracing: { random_sampling: { value: 0 } } }),
          ],
          clusters: [localCluster('backend', backend.port), localCluster('zipkin', collector.port), localCluster('zipkin-strict', strict.port)],
        },
      },
      [],
      15_000,
      { TRACING_TEST_REGION: 'eu-west' },
    );
    for (const name of ['shared', 'child', 'egress', 'sampling']) ports[name] = await proxy.listenerPort(name);
  });

  after(async () => {
    peers.close();
    await proxy?.cleanup();
    await backend?.close();
    await collector?.close();
    await strict?.close();
  });

  const stat = async (name: string): Promise<number> => (await proxy.stat(name)) ?? 0;

  const peers = listenerClients(ports);
  /** Each protocol, its http.protocol tag, and its requests with our authority. */
  const clients = peers.protocols.map(([protocol, send]) => {
    const authority = protocol === 'h2c' ? ':authority' : 'host';
    const tag = protocol === 'h2c' ? 'HTTP/2' : 'HTTP/1.1';
    return [protocol, tag, (listener: string, options: RequestOptions) => send(listener, { ...options, headers: { [authority]: HOST, ...options.headers } })] as const;
  });

  /** The span of trace `traceId` a collector received, waited for. */
  const spanOf = (from: Collector, traceId: string): Promise<ZipkinSpan> => waitFor(`the span of trace ${traceId}`, () => from.spans.find((s) => s.traceId === traceId));

  for (const [protocol, protocolTag, send] of clients) {
    // A trace of each test's own on each protocol, so that the collector tells them apart.
    const digit = protocol === 'h2c' ? '2' : '1';
    test(`${protocol}: a request without B3 headers starts a trace; its server span reaches the collector with Envoy's tags`, async () => {
      const sent = await stat('tracing.zipkin.spans_sent');
      const sampled = await stat('http.ingress_http.tracing.random_sampling');
      const before = Date.now() * 1000;
      const reply = await send('shared', { path: `/hello?via=${protocol}`, headers: { 'x-tenant': 'blue', 'user-agent': 'tracing-test' } });
      assert.equal(reply.status, 200);
      assert.equal(await stat('tracing.zipkin.spans_sent'), sent + 1);
      // Counted under the manager's stat prefix (every listener here has ingress_http).
      assert.equal(await stat('http.ingress_http.tracing.random_sampling'), sampled + 1);
      const upstream = backend.seen.at(-1)!.headers;
      const traceId = upstream['x-b3-traceid'] as string;
      assert.match(traceId, HEX16);
      // A root span: its id is the trace id.
      assert.equal(upstream['x-b3-spanid'], traceId);
      assert.equal(upstream['x-b3-parentspanid'], undefined);
      assert.equal(upstream['x-b3-sampled'], '1');
      // The request id carries the decision: sampled ('a' in place of the UUID's version).
      const requestId = upstream['x-request-id'] as string;
      assert.equal(requestId[14], 'a');

      const span = await spanOf(collector, traceId);
      assert.equal(span.id, traceId);
      assert.equal(span.parentId, undefined);
      assert.equal(span.kind, 'SERVER');
      assert.equal(span.shared, true);
      assert.equal(span.name, HOST);
      assert.deepEqual(span.localEndpoint.serviceName, 'front-proxy');
      // Microseconds since the epoch, and a duration in microseconds.
      assert.ok(Number.isInteger(span.timestamp) && span.timestamp >= before - 1_000_000 && span.timestamp <= Date.now() * 1000, `timestamp ${span.timestamp}`);
      assert.ok(Number.isInteger(span.duration) && span.duration > 0 && span.duration < 10_000_000, `duration ${span.duration}`);
      assert.deepEqual(span.tags, {
        'node_id': 'node-a',
        'zone': 'zone-a',
        'guid:x-request-id': requestId,
        'http.url': `http://${HOST}/hello?via=${protocol}`,
        'http.method': 'GET',
        'downstream_cluster': '-',
        'user_agent': 'tracing-test',
        'http.protocol': protocolTag,
        'peer.address': '127.0.0.1',
        'tenant': 'blue',
        'region': 'eu-west',
        'team': 'edge',
        'request_size': '0',
        'response_size': reply.body.length.toString(),
        'component': 'proxy',
        'upstream_cluster': 'backend',
        'http.status_code': '200',
        'response_flags': '-',
      });
      const report = collector.requests.at(-1)!;
      assert.equal(report.method, 'POST');
      assert.equal(report.url, '/api/v2/spans');
      assert.equal(report.headers['content-type'], 'application/json');
      assert.equal(report.headers.host, 'zipkin');
    });

    test(`${protocol}: with a shared context the server span takes the caller's span id; its parent stays the caller's parent`, async () => {
      const traceId = `463ac35c9f6413a${digit}`;
      const reply = await send('shared', {
        path: '/shared',
        headers: { 'x-b3-traceid': traceId, 'x-b3-spanid': 'a2fb4a1d1a96d312', 'x-b3-parentspanid': '0020000000000001', 'x-b3-sampled': '1' },
      });
      assert.equal(reply.status, 200);
      const upstream = backend.seen.at(-1)!.headers;
      assert.equal(upstream['x-b3-traceid'], traceId);
      assert.equal(upstream['x-b3-spanid'], 'a2fb4a1d1a96d312');
      assert.equal(upstream['x-b3-parentspanid'], '0020000000000001');
      const span = await spanOf(collector, traceId);
      assert.equal(span.id, 'a2fb4a1d1a96d312');
      assert.equal(span.parentId, '0020000000000001');
      assert.equal(span.kind, 'SERVER');
    });

    test(`${protocol}: without a shared context the caller's span becomes the parent; the upstream gets our span`, async () => {
      const dropped = await stat('tracing.zipkin.reports_dropped');
      const traceId = `0af7651916cd43dd8448eb211c80319${digit}`;
      const reply = await send('child', { path: '/child', headers: { b3: `${traceId}-b7ad6b7169203331-1` } });
      assert.equal(reply.status, 200);
      const upstream = backend.seen.at(-1)!.headers;
      assert.equal(upstream['x-b3-traceid'], traceId);
      assert.equal(upstream['x-b3-parentspanid'], 'b7ad6b7169203331');
      const spanId = upstream['x-b3-spanid'] as string;
      assert.match(spanId, HEX16);
      assert.notEqual(spanId, 'b7ad6b7169203331');
      const span = await spanOf(strict, traceId);
      assert.match(span.traceId, HEX32);
      assert.equal(span.id, spanId);
      assert.equal(span.parentId, 'b7ad6b7169203331');
      assert.equal(span.kind, 'SERVER');
      assert.equal(span.shared, undefined);
      // max_path_tag_length 4; verbose: the stream's events, in microseconds within the span.
      assert.equal(span.tags!['http.url'], `http://${HOST}/chi`);
      const events = span.annotations!.map((a) => a.value);
      for (const event of ['last_downstream_rx_byte_received', 'first_upstream_tx_byte_sent', 'first_upstream_rx_byte_received', 'last_upstream_rx_byte_received', 'first_downstream_tx_byte_sent']) {
        assert.ok(events.includes(event), `${event} in ${events.join(', ')}`);
      }
      for (const annotation of span.annotations!) assert.ok(annotation.timestamp >= span.timestamp - 1000 && annotation.timestamp <= span.timestamp + span.duration + 1000);
      // That collector answers 400: the report counts as dropped.
      await waitFor('the dropped report', async () => ((await stat('tracing.zipkin.reports_dropped')) > dropped ? true : undefined));
    });

    test(`${protocol}: a new trace on a 128-bit tracer has a 128-bit trace id`, async () => {
      const reply = await send('child', { path: '/wide' });
      assert.equal(reply.status, 200);
      const upstream = backend.seen.at(-1)!.headers;
      const traceId = upstream['x-b3-traceid'] as string;
      assert.match(traceId, HEX32);
      // The root span's id is the trace id's lower half.
      assert.equal(upstream['x-b3-spanid'], traceId.slice(16));
      const span = await spanOf(strict, traceId);
      assert.equal(span.id, traceId.slice(16));
    });

    test(`${protocol}: a decorated route names the span and tells the caller; a 503 is an error`, async () => {
      const reply = await send('shared', { path: '/decorated/cart' });
      assert.equal(reply.status, 200);
      assert.equal(reply.headers['x-proxy-decorator-operation'], 'checkout');
      const decorated = await spanOf(collector, backend.seen.at(-1)!.headers['x-b3-traceid'] as string);
      assert.equal(decorated.name, 'checkout');
      // Ingress: the caller's name for the operation wins, goes no further, and is not sent back.
      const named = await send('shared', { path: '/decorated/named', headers: { 'x-proxy-decorator-operation': 'from-caller' } });
      assert.equal(named.headers['x-proxy-decorator-operation'], undefined);
      assert.equal(backend.seen.at(-1)!.headers['x-proxy-decorator-operation'], undefined);
      assert.equal((await spanOf(collector, backend.seen.at(-1)!.headers['x-b3-traceid'] as string)).name, 'from-caller');

      const sent = await stat('tracing.zipkin.spans_sent');
      const broken = await send('shared', { path: '/broken' });
      assert.equal(broken.status, 503);
      assert.equal(await stat('tracing.zipkin.spans_sent'), sent + 1);
      const span = await waitFor('the 503 span', () => collector.spans.find((s) => s.tags?.['http.url'] === `http://${HOST}/broken` && s.tags['http.protocol'] === protocolTag));
      assert.equal(span.tags!['http.status_code'], '503');
      assert.equal(span.tags!['error'], 'true');
      assert.equal(span.tags!['upstream_cluster'], undefined);
    });

    test(`${protocol}: egress spans are client spans; the decorator goes upstream, the upstream's name for it comes back to the span only`, async () => {
      const reply = await send('egress', { path: '/decorated/pay', headers: { 'x-answer-operation': 'renamed-upstream' } });
      assert.equal(reply.status, 200);
      assert.equal(reply.headers['x-proxy-decorator-operation'], undefined);
      const upstream = backend.seen.at(-1)!.headers;
      assert.equal(upstream['x-proxy-decorator-operation'], 'checkout');
      const span = await spanOf(collector, upstream['x-b3-traceid'] as string);
      assert.equal(span.kind, 'CLIENT');
      assert.equal(span.shared, undefined);
      assert.equal(span.name, 'renamed-upstream');
    });

    test(`${protocol}: a caller that samples nothing is followed: no span is reported, the upstream is told`, async () => {
      const sent = await stat('tracing.zipkin.spans_sent');
      const reply = await send('shared', { path: '/unsampled', headers: { 'x-b3-traceid': '1111111111111111', 'x-b3-spanid': '2222222222222222', 'x-b3-sampled': '0' } });
      assert.equal(reply.status, 200);
      assert.equal(backend.seen.at(-1)!.headers['x-b3-sampled'], '0');
      assert.equal(await stat('tracing.zipkin.spans_sent'), sent);
    });

    test(`${protocol}: without random sampling, only a client's x-client-trace-id, a trusted force or a route's own sampling trace`, async () => {
      const counters = async () => ({
        client: await stat('http.ingress_http.tracing.client_enabled'),
        forced: await stat('http.ingress_http.tracing.service_forced'),
        none: await stat('http.ingress_http.tracing.not_traceable'),
        random: await stat('http.ingress_http.tracing.random_sampling'),
      });
      const start = await counters();

      await send('sampling', { path: '/plain' });
      assert.equal(backend.seen.at(-1)!.headers['x-b3-sampled'], '0');
      assert.equal((backend.seen.at(-1)!.headers['x-request-id'] as string)[14], '4');

      await send('sampling', { path: '/asked', headers: { 'x-client-trace-id': 'client-1' } });
      assert.equal(backend.seen.at(-1)!.headers['x-b3-sampled'], '1');
      assert.equal((backend.seen.at(-1)!.headers['x-request-id'] as string)[14], 'b');
      const asked = await spanOf(collector, backend.seen.at(-1)!.headers['x-b3-traceid'] as string);
      assert.equal(asked.tags!['guid:x-client-trace-id'], 'client-1');

      // From 127.0.0.1 under use_remote_address: a trusted client.
      await send('sampling', { path: '/forced', headers: { 'x-proxy-force-trace': 'true' } });
      assert.equal(backend.seen.at(-1)!.headers['x-b3-sampled'], '1');
      assert.equal((backend.seen.at(-1)!.headers['x-request-id'] as string)[14], '9');
      // Through a proxy that named an outside client: not trusted, not forced.
      await send('sampling', { path: '/forced-from-outside', headers: { 'x-proxy-force-trace': 'true', 'x-forwarded-for': '203.0.113.9' } });
      assert.equal(backend.seen.at(-1)!.headers['x-b3-sampled'], '0');

      await send('sampling', { path: '/route-sampled' });
      assert.equal(backend.seen.at(-1)!.headers['x-b3-sampled'], '1');
      const routed = await spanOf(collector, backend.seen.at(-1)!.headers['x-b3-traceid'] as string);
      // The route's tags come first.
      assert.equal(routed.tags!['tenant'], 'route');

      assert.deepEqual(await counters(), { client: start.client + 1, forced: start.forced + 1, none: start.none + 2, random: start.random + 1 });
    });
  }

  test('the reports counted: sent for the collector that accepts them, spans by the span', async () => {
    assert.ok((await stat('tracing.zipkin.reports_sent')) > 0);
    assert.ok((await stat('tracing.zipkin.reports_dropped')) > 0);
    assert.equal(await stat('tracing.zipkin.reports_failed'), 0);
    assert.equal(await stat('tracing.zipkin.spans_sent'), collector.spans.length + strict.spans.length);
  });
});
