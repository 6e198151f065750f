// proxy.filters.http.grpc_web and proxy.filters.http.grpc_http1_bridge through the real binary, in
// front of a @grpc/grpc-js server on an HTTP/2 cluster. gRPC-Web clients written here: binary and
// base64 text, over HTTP/1.1 (bodies in odd pieces) and h2c; the upstream's trailers come back as
// the trailer frame. The bridge: an HTTP/1.1 gRPC call gets its status in headers (503 unless 0)
// and a whole body; over h2c it is left alone. Both count calls per service and method, in /stats
// and /stats/prometheus.

import assert from 'node:assert/strict';
import * as http from 'node:http';
import * as http2 from 'node:http2';
import { after, before, describe, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { httpListener, type Json, localCluster } from '../helpers/config_fixtures';
import { type RunningProxy, startProxy } from '../helpers/proxy_process';

const TIMEOUT = { timeout: 60_000 };
/** Messages are raw bytes: no protobuf needed to see them pass. */
const raw = { requestSerialize: (b: Buffer) => b, requestDeserialize: (b: Buffer) => b, responseSerialize: (b: Buffer) => b, responseDeserialize: (b: Buffer) => b };
const SERVICE = {
  unary: { path: '/test.Echo/Unary', requestStream: false, responseStream: false, ...raw },
  fail: { path: '/test.Echo/Fail', requestStream: false, responseStream: false, ...raw },
  late: { path: '/test.Echo/Late', requestStream: false, responseStream: true, ...raw },
} as const;

function trailer(name: string, value: string): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set(name, value);
  return metadata;
}

function startGrpcServer(): Promise<{ server: grpc.Server; port: number }> {
  const server = new grpc.Server();
  server.addService(SERVICE, {
    unary: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) =>
      callback(null, Buffer.from(`echo:${call.request.toString()}`), trailer('x-unary-trailer', 'u1')),
    // An error before any message: a trailers-only response.
    fail: (_call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) =>
      callback({ code: grpc.status.NOT_FOUND, details: 'no such echo', metadata: trailer('x-fail-trailer', 'f1') }),
    // An error after a message: the status in trailers.
    late: (call: grpc.ServerWritableStream<Buffer, Buffer>) => {
      call.write(Buffer.from('partial'));
      call.emit('error', { code: grpc.status.RESOURCE_EXHAUSTED, details: 'ran out' });
    },
  });
  return new Promise((resolve, reject) => {
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, port) => (error === null ? resolve({ server, port }) : reject(error)));
  });
}

/** A gRPC frame: flags, 32-bit length, message. */
function frame(message: string, flags = 0): Buffer {
  const payload = Buffer.from(message);
  const header = Buffer.alloc(5);
  header[0] = flags;
  header.writeUInt32BE(payload.length, 1);
  return Buffer.concat([header, payload]);
}

/** The frames of a body: messages, and the trailer frame's lines as a map. */
function readFrames(body: Buffer): { messages: string[]; trailers: Record<string, string> | null } {
  const messages: string[] = [];
  let trailers: Record<string, string> | null = null;
  for (let offset = 0; offset < body.length; ) {
    const flags = body[offset]!;
    const length = body.readUInt32BE(offset + 1);
    const payload = body.subarray(offset + 5, offset + 5 + length).toString();
    offset += 5 + length;
    if ((flags & 0x80) === 0) {
      messages.push(payload);
      continue;
    }
    trailers = {};
    for (const line of payload.split('\r\n').filter((l) => l !== '')) {
      const colon = line.indexOf(':');
      trailers[line.slice(0, colon)] = line.slice(colon + 1);
    }
  }
  return { messages, trailers };
}

/** grpc-web-text: base64 groups of four, each frame encoded on its own (padding between them). */
function fromText(text: string): Buffer {
  const groups: Buffer[] = [];
  for (let i = 0; i < text.length; i += 4) groups.push(Buffer.from(text.slice(i, i + 4), 'base64'));
  return Buffer.concat(groups);
}

interface Reply {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
  readonly trailers: Record<string, string>;
}

/** A POST over HTTP/1.1 with its body written in `pieces` (chunked). */
function post1(port: number, path: string, headers: http.OutgoingHttpHeaders, pieces: readonly Buffer[]): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks), trailers: res.trailers as Record<string, string> }));
    });
    req.on('error', reject);
    for (const piece of pieces) req.write(piece);
    req.end();
  });
}

/** A POST over h2c on `session`. */
function post2(session: http2.ClientHttp2Session, path: string, headers: http2.OutgoingHttpHeaders, body: Buffer): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': 'POST', ':path': path, ...headers });
    let head: http2.IncomingHttpHeaders = {};
    let trailers: Record<string, string> = {};
    const chunks: Buffer[] = [];
    stream.on('response', (received) => (head = received));
    stream.on('trailers', (received) => (trailers = received as Record<string, string>));
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => {
      const { ':status': status, ...rest } = head;
      resolve({ status: Number(status), headers: rest as http.IncomingHttpHeaders, body: Buffer.concat(chunks), trailers });
    });
    stream.on('error', reject);
    stream.end(body);
  });
}

/** `bytes` in pieces of 1, 2, 3, ... bytes: every boundary a chunk can fall on. */
function pieces(bytes: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let offset = 0, size = 1; offset < bytes.length; offset += size, size++) out.push(bytes.subarray(offset, offset + size));
  return out;
}

describe('gRPC-Web and the gRPC HTTP/1.1 bridge in front of a gRPC server', TIMEOUT, () => {
  let upstream: { server: grpc.Server; port: number };
  /** An HTTP/2 server answering with the request's headers as a gRPC message. */
  let raw: http2.Http2Server;
  let proxy: RunningProxy;
  let webPort = 0;
  let bridgePort = 0;
  const sessions: http2.ClientHttp2Session[] = [];
  const session = (port: number) => {
    const opened = http2.connect(`http://127.0.0.1:${port}`);
    sessions.push(opened);
    return opened;
  };

  before(async () => {
    upstream = await startGrpcServer();
    raw = http2.createServer();
    raw.on('stream', (stream, headers) => {
      stream.on('data', () => {});
      stream.on('end', () => {
        stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
        stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
        stream.end(frame(JSON.stringify(headers)));
      });
    });
    await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
    const routes = [
      { match: { prefix: '/raw.' }, route: { cluster: 'raw' } },
      { match: { prefix: '/' }, route: { cluster: 'echo' } },
    ];
    const listener = (name: string, filter: object, last: Json[] = routes) => httpListener(name, 0, last, { stat_prefix: name, http_filters: [filter, { name: 'envoy.filters.http.router' }] });
    // Counted under the cluster the draw picks, as the router takes it.
    const weighted = [routes[0], { match: { prefix: '/' }, route: { weighted_clusters: { clusters: [{ name: 'echo', weight: 100 }] } } }];
    proxy = await startProxy({
      static_resources: {
        listeners: [
          listener('web', { name: 'envoy.filters.http.grpc_web', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.grpc_web.v3.GrpcWeb' } }, weighted),
          listener('bridge', { name: 'envoy.grpc_http1_bridge' }),
        ],
        clusters: [
          { ...localCluster('echo', upstream.port), http2_protocol_options: {} },
          { ...localCluster('raw', (raw.address() as { port: number }).port), http2_protocol_options: {} },
        ],
      },
    });
    webPort = await proxy.listenerPort('web');
    bridgePort = await proxy.listenerPort('bridge');
  });

  after(async () => {
    for (const opened of sessions) opened.destroy();
    await proxy?.cleanup();
    upstream?.server.forceShutdown();
    raw?.close();
  });

  const WEB = { 'content-type': 'application/grpc-web+proto', 'x-grpc-web': '1' };
  const TEXT = { 'content-type': 'application/grpc-web-text', accept: 'application/grpc-web-text' };

  test('HTTP/1.1 gRPC-Web, binary: the message back, the trailers as the last frame', async () => {
    const reply = await post1(webPort, '/test.Echo/Unary', WEB, pieces(frame('hello')));
    assert.equal(reply.status, 200);
    assert.equal(reply.headers['content-type'], 'application/grpc-web+proto');
    assert.equal(reply.headers['grpc-status'], undefined);
    const { messages, trailers } = readFrames(reply.body);
    // The upstream got te: trailers.
    assert.deepEqual(messages, ['echo:hello']);
    assert.equal(trailers?.['grpc-status'], '0');
    assert.equal(trailers?.['x-unary-trailer'], 'u1');
  });

  test('what goes upstream is gRPC: content-type, te: trailers, grpc-accept-encoding, no content-length', async () => {
    const reply = await post1(webPort, '/raw.Echo/Headers', { ...WEB, 'content-length': String(frame('x').length) }, [frame('x')]);
    const seen = JSON.parse(readFrames(reply.body).messages[0]!) as Record<string, string>;
    assert.equal(seen['content-type'], 'application/grpc');
    assert.equal(seen.te, 'trailers');
    assert.equal(seen['grpc-accept-encoding'], 'identity,deflate,gzip');
    assert.equal(seen['content-length'], undefined);
    // The client's own grpc-accept-encoding is kept.
    const own = await post2(session(webPort), '/raw.Echo/Headers', { ...TEXT, 'grpc-accept-encoding': 'identity' }, Buffer.from(frame('y').toString('base64')));
    const seenOwn = JSON.parse(readFrames(fromText(own.body.toString())).messages[0]!) as Record<string, string>;
    assert.equal(seenOwn['grpc-accept-encoding'], 'identity');
    assert.equal(seenOwn['content-type'], 'application/grpc');
  });

  test('HTTP/1.1 gRPC-Web text: base64 both ways, split anywhere', async () => {
    const body = Buffer.from(frame('text please').toString('base64'));
    const reply = await post1(webPort, '/test.Echo/Unary', TEXT, pieces(body));
    assert.equal(reply.status, 200);
    assert.equal(reply.headers['content-type'], 'application/grpc-web-text+proto');
    assert.match(reply.body.toString(), /^[A-Za-z0-9+/=]+$/);
    const { messages, trailers } = readFrames(fromText(reply.body.toString()));
    assert.deepEqual(messages, ['echo:text please']);
    assert.equal(trailers?.['grpc-status'], '0');
  });

  test('h2c gRPC-Web, binary and text; a failed call', async () => {
    const h2 = session(webPort);
    const binary = await post2(h2, '/test.Echo/Unary', WEB, frame('over h2'));
    assert.equal(binary.headers['content-type'], 'application/grpc-web+proto');
    assert.deepEqual(readFrames(binary.body).messages, ['echo:over h2']);
    assert.deepEqual(binary.trailers, {});
    const text = await post2(h2, '/test.Echo/Unary', TEXT, Buffer.from(frame('t').toString('base64')));
    assert.deepEqual(readFrames(fromText(text.body.toString())).messages, ['echo:t']);
    // An error after a message: its status in the trailer frame.
    const late = readFrames((await post2(h2, '/test.Echo/Late', WEB, frame('x'))).body);
    assert.deepEqual(late.messages, ['partial']);
    assert.equal(late.trailers?.['grpc-status'], '8');
    assert.equal(late.trailers?.['grpc-message'], 'ran%20out');
    // A trailers-only answer keeps its status in the headers, as gRPC-Web allows.
    const failed = await post2(h2, '/test.Echo/Fail', WEB, frame('x'));
    assert.equal(failed.headers['content-type'], 'application/grpc-web+proto');
    assert.equal(failed.headers['grpc-status'], '5');
    assert.equal(failed.headers['x-fail-trailer'], 'f1');
    assert.equal(failed.body.length, 0);
  });

  test('a text body that is not base64, or ends short of a group of four, is answered 400', async () => {
    const junk = await post1(webPort, '/test.Echo/Unary', { 'content-type': 'application/grpc-web-text' }, [Buffer.from('!!!!')]);
    assert.equal(junk.status, 400);
    assert.equal(junk.body.toString(), 'Bad gRPC-web request, invalid base64 data.');
    const short = await post1(webPort, '/test.Echo/Unary', { 'content-type': 'application/grpc-web-text' }, [Buffer.from('AAAAAAE')]);
    assert.equal(short.status, 400);
  });

  test('the bridge: an HTTP/1.1 gRPC call gets its status as headers and a whole body', async () => {
    const ok = await post1(bridgePort, '/test.Echo/Unary', { 'content-type': 'application/grpc' }, pieces(frame('bridged')));
    assert.equal(ok.status, 200);
    assert.equal(ok.headers['grpc-status'], '0');
    assert.equal(ok.headers['content-length'], String(ok.body.length));
    assert.deepEqual(readFrames(ok.body).messages, ['echo:bridged']);
    const late = await post1(bridgePort, '/test.Echo/Late', { 'content-type': 'application/grpc' }, [frame('x')]);
    assert.equal(late.status, 503);
    assert.equal(late.headers['grpc-status'], '8');
    assert.equal(late.headers['grpc-message'], 'ran%20out');
    assert.equal(late.headers['content-length'], String(late.body.length));
    assert.deepEqual(readFrames(late.body).messages, ['partial']);
    // A trailers-only answer has its status in headers already, and goes on as it came (Envoy 1.16 keeps its 200).
    const failed = await post1(bridgePort, '/test.Echo/Fail', { 'content-type': 'application/grpc' }, [frame('x')]);
    assert.equal(failed.status, 200);
    assert.equal(failed.headers['grpc-status'], '5');
    assert.equal(failed.headers['grpc-message'], 'no%20such%20echo');
  });

  test('the bridge leaves an h2c gRPC call alone: its trailers stay trailers', async () => {
    const reply = await post2(session(bridgePort), '/test.Echo/Unary', { 'content-type': 'application/grpc', te: 'trailers' }, frame('h2'));
    assert.equal(reply.status, 200);
    assert.equal(reply.headers['grpc-status'], undefined);
    assert.equal(reply.trailers['grpc-status'], '0');
    assert.deepEqual(readFrames(reply.body).messages, ['echo:h2']);
  });

  test('calls are counted per service and method, by status', async () => {
    const stat = async (name: string) => (await proxy.stat(name)) ?? 0;
    // Four Unary calls through grpc_web, one Fail, one Late; the two 400s never reached a status.
    assert.equal(await stat('cluster.echo.grpc-web.test.Echo.Unary.success'), 4);
    assert.equal(await stat('cluster.echo.grpc-web.test.Echo.Unary.0'), 4);
    assert.equal(await stat('cluster.echo.grpc-web.test.Echo.Unary.total'), 4);
    assert.equal(await stat('cluster.echo.grpc-web.test.Echo.Fail.failure'), 1);
    assert.equal(await stat('cluster.echo.grpc-web.test.Echo.Fail.5'), 1);
    assert.equal(await stat('cluster.echo.grpc-web.test.Echo.Late.8'), 1);
    // The bridge counts gRPC calls over both protocols.
    assert.equal(await stat('cluster.echo.grpc.test.Echo.Unary.success'), 2);
    assert.equal(await stat('cluster.echo.grpc.test.Echo.Fail.failure'), 1);
    assert.equal(await stat('cluster.echo.grpc.test.Echo.Fail.total'), 1);
    assert.equal(await stat('cluster.echo.grpc.test.Echo.Late.8'), 1);
  });

  test('in /stats/prometheus: the bridge\'s counters tagged by service and method, as Envoy\'s rules tag them', async () => {
    const lines = new Set((await proxy.admin('/stats/prometheus')).body.split('\n'));
    const sample = (line: string) => assert.ok(lines.has(line), line);
    // cluster.<name>.grpc.<service>.<method>.<counter>; Envoy's rules take the service up to its first dot.
    sample('proxy_cluster_grpc_Echo_success{proxy_grpc_bridge_method="Unary",proxy_grpc_bridge_service="test",proxy_cluster_name="echo"} 2');
    sample('proxy_cluster_grpc_Echo_total{proxy_grpc_bridge_method="Fail",proxy_grpc_bridge_service="test",proxy_cluster_name="echo"} 1');
    sample('proxy_cluster_grpc_Echo_8{proxy_grpc_bridge_method="Late",proxy_grpc_bridge_service="test",proxy_cluster_name="echo"} 1');
    // gRPC-Web's are under `grpc-web.`, which no default rule reads: only the cluster is a tag.
    sample('proxy_cluster_grpc_web_test_Echo_Unary_success{proxy_cluster_name="echo"} 4');
    sample('proxy_cluster_grpc_web_test_Echo_Fail_failure{proxy_cluster_name="echo"} 1');
  });
});
