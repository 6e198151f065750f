// gRPC through the proxy binary: a @grpc/grpc-js client, through a listener (h2c, and h2 over
// TLS), to an HTTP/2 cluster whose server is @grpc/grpc-js. Every call sees what the upstream
// sent: its messages, its status and its trailing metadata, which HTTP/2 trailers carry.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { type CertificateFiles, makeCa, makeLeaf } from '../helpers/certificates';
import { httpListener, localCluster, withDownstreamTls } from '../helpers/config_fixtures';
import { makeTempDir, type RunningProxy, startProxy } from '../helpers/proxy_process';

const SERVER_NAME = 'grpc.example';
const TIMEOUT = { timeout: 60_000 };
/** Messages are raw bytes: no protobuf needed to see them pass. */
const raw = { requestSerialize: (b: Buffer) => b, requestDeserialize: (b: Buffer) => b, responseSerialize: (b: Buffer) => b, responseDeserialize: (b: Buffer) => b };
const SERVICE = {
  unary: { path: '/test.Echo/Unary', requestStream: false, responseStream: false, ...raw },
  stream: { path: '/test.Echo/Stream', requestStream: false, responseStream: true, ...raw },
  fail: { path: '/test.Echo/Fail', requestStream: false, responseStream: false, ...raw },
} as const;
const Client = grpc.makeGenericClientConstructor(SERVICE, 'Echo');
type EchoClient = InstanceType<typeof Client> & Record<string, (...args: unknown[]) => grpc.ClientReadableStream<Buffer> & grpc.ClientUnaryCall>;

function trailer(name: string, value: string): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set(name, value);
  return metadata;
}

function startGrpcServer(): Promise<{ server: grpc.Server; port: number }> {
  const server = new grpc.Server();
  server.addService(SERVICE, {
    unary: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) =>
      callback(null, Buffer.concat([Buffer.from('echo:'), call.request]), trailer('x-unary-trailer', 'u1')),
    stream: (call: grpc.ServerWritableStream<Buffer, Buffer>) => {
      for (let i = 0; i < 3; i++) call.write(Buffer.from(`${call.request.toString()}#${i}`));
      call.end(trailer('x-stream-trailer', 's1'));
    },
    fail: (_call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) =>
      callback({ code: grpc.status.NOT_FOUND, details: 'no such echo', metadata: trailer('x-fail-trailer', 'f1') }),
  });
  return new Promise((resolve, reject) => {
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, port) => (error === null ? resolve({ server, port }) : reject(error)));
  });
}

interface Outcome {
  readonly messages: string[];
  readonly code: number;
  readonly details: string;
  readonly trailers: Record<string, unknown>;
}

function unary(client: EchoClient, method: 'unary' | 'fail', body: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const messages: string[] = [];
    const call = client[method](Buffer.from(body), { deadline: Date.now() + 10_000 }, (_error: unknown, reply?: Buffer) => {
      if (reply !== undefined) messages.push(reply.toString());
    });
    call.on('status', (status: grpc.StatusObject) => resolve({ messages, code: status.code, details: status.details, trailers: status.metadata.getMap() }));
  });
}

function serverStream(client: EchoClient, body: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const messages: string[] = [];
    const call = client.stream(Buffer.from(body), { deadline: Date.now() + 10_000 });
    call.on('data', (reply: Buffer) => messages.push(reply.toString()));
    call.on('error', () => {});
    call.on('status', (status: grpc.StatusObject) => resolve({ messages, code: status.code, details: status.details, trailers: status.metadata.getMap() }));
  });
}

describe('gRPC through the proxy', TIMEOUT, () => {
  let dir: string;
  let ca: CertificateFiles;
  let upstream: { server: grpc.Server; port: number };
  let proxy: RunningProxy;
  const clients: EchoClient[] = [];

  before(async () => {
    dir = makeTempDir();
    ca = makeCa(dir, 'ca', 2);
    const cert = makeLeaf(dir, ca, 'server', `DNS:${SERVER_NAME}`, 2);
    upstream = await startGrpcServer();
    const routes = [{ match: { prefix: '/' }, route: { cluster: 'grpc' } }];
    proxy = await startProxy({
      static_resources: {
        listeners: [httpListener('h2c', 0, routes), withDownstreamTls(httpListener('h2_tls', 0, routes), cert, ['h2'])],
        clusters: [{ ...localCluster('grpc', upstream.port), http2_protocol_options: {} }],
      },
    });
    const h2c = new Client(`127.0.0.1:${await proxy.listenerPort('h2c')}`, grpc.credentials.createInsecure()) as EchoClient;
    const tls = new Client(`127.0.0.1:${await proxy.listenerPort('h2_tls')}`, grpc.credentials.createSsl(fs.readFileSync(ca.cert)), {
      'grpc.ssl_target_name_override': SERVER_NAME,
      'grpc.default_authority': SERVER_NAME,
    }) as EchoClient;
    clients.push(h2c, tls);
  });

  after(async () => {
    for (const client of clients) client.close();
    await proxy?.cleanup();
    upstream?.server.forceShutdown();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  for (const [index, name] of ['h2c', 'h2 over TLS'].entries()) {
    test(`${name}: a unary call gets the upstream's reply, status OK and trailing metadata`, async () => {
      const outcome = await unary(clients[index], 'unary', 'hello');
      assert.deepEqual(outcome.messages, ['echo:hello']);
      assert.equal(outcome.code, grpc.status.OK);
      assert.equal(outcome.trailers['x-unary-trailer'], 'u1');
    });

    test(`${name}: a server-streaming call gets every message, then the status and trailing metadata`, async () => {
      const outcome = await serverStream(clients[index], 'tick');
      assert.deepEqual(outcome.messages, ['tick#0', 'tick#1', 'tick#2']);
      assert.equal(outcome.code, grpc.status.OK);
      assert.equal(outcome.trailers['x-stream-trailer'], 's1');
    });

    test(`${name}: a call the upstream fails sees its gRPC status, message and trailing metadata`, async () => {
      const outcome = await unary(clients[index], 'fail', 'x');
      assert.deepEqual(outcome.messages, []);
      assert.equal(outcome.code, grpc.status.NOT_FOUND);
      assert.equal(outcome.details, 'no such echo');
      assert.equal(outcome.trailers['x-fail-trailer'], 'f1');
    });
  }

  test('twenty calls in a row all pass, and no worker restarted', async () => {
    const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => unary(clients[i % 2], 'unary', `n${i}`)));
    assert.deepEqual(
      outcomes.map((o) => o.code),
      outcomes.map(() => grpc.status.OK),
    );
    assert.equal(await proxy.stat('server.worker_restarts'), 0);
  });
});
