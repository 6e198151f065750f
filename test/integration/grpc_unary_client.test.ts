// The gRPC unary client over the async client, against a gRPC server on 127.0.0.1 (h2c, a
// static cluster with http2_protocol_options): the call as gRPC frames it (path, content-type,
// te, grpc-timeout, the cluster's name as authority, one length-prefixed message), the answer's
// message, and each way a call fails with the status Envoy 1.16 gives it.

import assert from 'node:assert/strict';
import * as http2 from 'node:http2';
import type * as net from 'node:net';
import { describe, test, type TestContext } from 'node:test';
import { SystemClock } from '../../src/common/clock';
import { http2ProtocolOptionsOf } from '../../src/config/model_builder';
import { grpcFrame, grpcMessages } from '../../src/http/grpc_frame';
import { LiveRuntime } from '../../src/runtime/live_runtime';
import { createHeapStatsStore } from '../../src/stats/store';
import { AsyncClient } from '../../src/upstream/worker/async_client';
import { ClusterManager } from '../../src/upstream/worker/cluster_manager';
import { type GrpcService, GrpcUnaryClient } from '../../src/upstream/worker/grpc_unary_client';
import { silentLogger, staticCluster } from '../helpers/data_plane';
import { closeServer, listen } from '../helpers/http_peers';
import { staticSnapshots } from '../helpers/membership';

type Outcome = { readonly message: string } | { readonly status: number; readonly text: string };

/** The service: each method answers its own way; `seen` keeps each call's headers and message. */
async function grpcServer(t: TestContext): Promise<{ port: number; seen: { headers: http2.IncomingHttpHeaders; message: string }[] }> {
  const seen: { headers: http2.IncomingHttpHeaders; message: string }[] = [];
  const server = http2.createServer();
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });
  server.on('stream', (stream, headers) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      const messages = grpcMessages(Buffer.concat(chunks)) ?? [];
      const message = messages.map((m) => m.toString()).join('|');
      seen.push({ headers, message });
      const answer = (body: Buffer, trailers: http2.OutgoingHttpHeaders) => {
        stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
        stream.on('wantTrailers', () => stream.sendTrailers(trailers));
        stream.end(body);
      };
      switch (headers[':path']) {
        case '/test.Echo/Reverse':
          answer(grpcFrame(Buffer.from([...message].reverse().join(''))), { 'grpc-status': '0' });
          break;
        case '/test.Echo/Refuse':
          answer(Buffer.alloc(0), { 'grpc-status': '7', 'grpc-message': 'not for you %E2%9C%93' });
          break;
        case '/test.Echo/TrailersOnly':
          stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '5', 'grpc-message': 'nothing here' }, { endStream: true });
          break;
        case '/test.Echo/Garbled':
          answer(Buffer.from([1, 0, 0, 0, 1, 0x41]), { 'grpc-status': '0' });
          break;
        case '/test.Echo/Empty':
          answer(Buffer.alloc(0), { 'grpc-status': '0' });
          break;
        case '/test.Echo/NoTrailers':
          stream.respond({ ':status': 200, 'content-type': 'application/grpc' });
          stream.end(grpcFrame(Buffer.from('x')));
          break;
        case '/test.Echo/Http503':
          stream.respond({ ':status': 503 }, { endStream: true });
          break;
        default:
          // Never answers.
          break;
      }
    });
  });
  const port = await listen(server as unknown as net.Server);
  t.after(async () => {
    for (const session of sessions) session.destroy();
    await closeServer(server as unknown as net.Server);
  });
  return { port, seen };
}

function clientOf(t: TestContext, port: number, service: Partial<GrpcService> = {}): GrpcUnaryClient {
  const store = createHeapStatsStore();
  const runtime = new LiveRuntime([]);
  const configs = [staticCluster('grpc-service', [{ port }], { http2ProtocolOptions: http2ProtocolOptionsOf({}) })];
  const clusters = new ClusterManager({ configs, snapshots: staticSnapshots(configs, store.hosts), store, runtime, log: () => silentLogger });
  t.after(() => clusters.close());
  const client = new AsyncClient({ clock: new SystemClock(), localAddress: undefined });
  return new GrpcUnaryClient(clusters, client, { clusterName: 'grpc-service', timeoutMs: 2000, ...service });
}

function call(client: GrpcUnaryClient, method: string, message: string): Promise<Outcome> {
  return new Promise((resolve) => {
    client.send(method, Buffer.from(message), {
      onSuccess: (answer) => resolve({ message: answer.toString() }),
      onFailure: (status, text) => resolve({ status, text }),
    });
  });
}

describe('the gRPC unary client', { timeout: 30_000 }, () => {
  test('a call: one framed message out as gRPC asks, one message back', async (t) => {
    const { port, seen } = await grpcServer(t);
    const client = clientOf(t, port);
    assert.deepEqual(await call(client, 'test.Echo/Reverse', 'hello'), { message: 'olleh' });
    const { headers, message } = seen[0]!;
    assert.equal(message, 'hello');
    assert.equal(headers[':method'], 'POST');
    assert.equal(headers[':path'], '/test.Echo/Reverse');
    assert.equal(headers[':authority'], 'grpc-service');
    assert.equal(headers['content-type'], 'application/grpc');
    assert.equal(headers['te'], 'trailers');
    assert.equal(headers['grpc-timeout'], '2000m');
    assert.equal(headers['x-proxy-internal'], 'true');
  });

  test("grpc_service's initial_metadata goes with every call", async (t) => {
    const { port, seen } = await grpcServer(t);
    const client = clientOf(t, port, { initialMetadata: ['x-tenant', 'blue', 'x-tenant', 'green', 'authorization', 'Bearer t'] });
    await call(client, 'test.Echo/Reverse', 'a');
    await call(client, 'test.Echo/Reverse', 'b');
    for (const { headers } of seen) {
      assert.equal(headers['x-tenant'], 'blue, green');
      assert.equal(headers['authorization'], 'Bearer t');
    }
    assert.equal(seen.length, 2);
  });

  test("a status in the trailers, or in a trailers-only answer, fails the call with it, its message decoded", async (t) => {
    const { port } = await grpcServer(t);
    const client = clientOf(t, port);
    assert.deepEqual(await call(client, 'test.Echo/Refuse', 'x'), { status: 7, text: 'not for you ✓' });
    assert.deepEqual(await call(client, 'test.Echo/TrailersOnly', 'x'), { status: 5, text: 'nothing here' });
  });

  test('what is no proper answer: INTERNAL for a malformed or empty body, UNKNOWN without a status, CANCELLED for a plain HTTP error', async (t) => {
    const { port } = await grpcServer(t);
    const client = clientOf(t, port);
    assert.deepEqual(await call(client, 'test.Echo/Garbled', 'x'), { status: 13, text: '' });
    assert.deepEqual(await call(client, 'test.Echo/Empty', 'x'), { status: 13, text: '' });
    assert.deepEqual(await call(client, 'test.Echo/NoTrailers', 'x'), { status: 2, text: '' });
    assert.deepEqual(await call(client, 'test.Echo/Http503', 'x'), { status: 1, text: '' });
  });

  test("no answer within the timeout: UNAVAILABLE, as the router answers a gRPC request; a cluster that is gone: UNAVAILABLE at once", async (t) => {
    const { port, seen } = await grpcServer(t);
    const slow = clientOf(t, port, { timeoutMs: 100 });
    assert.deepEqual(await call(slow, 'test.Echo/Silent', 'x'), { status: 14, text: 'upstream request timeout' });
    assert.equal(seen[0]!.headers['grpc-timeout'], '100m');
    const gone = clientOf(t, port, { clusterName: 'elsewhere' });
    let outcome: Outcome | null = null;
    const request = gone.send('test.Echo/Reverse', Buffer.from('x'), { onSuccess: () => assert.fail('no answer'), onFailure: (status, text) => (outcome = { status, text }) });
    assert.equal(request, null);
    assert.deepEqual(outcome, { status: 14, text: 'Cluster not available' });
  });
});
