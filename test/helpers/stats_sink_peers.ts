// What the proxy's stats sinks send to, for tests: a statsd server over UDP (each datagram kept
// as it came) or TCP (lines), and a gRPC MetricsService that decodes each StreamMetricsMessage
// of each stream, on both of its versions' paths, and can end a stream. All on 127.0.0.1, port 0.

import * as dgram from 'node:dgram';
import * as grpc from '@grpc/grpc-js';
import * as net from 'node:net';
import { protoSchema } from '../../src/config/schema';
import { listen } from './http_peers';

export class UdpStatsdServer {
  /** Every datagram received, in order. */
  readonly datagrams: string[] = [];

  private constructor(
    private readonly socket: dgram.Socket,
    readonly port: number,
  ) {
    socket.on('message', (message) => this.datagrams.push(message.toString()));
  }

  static async start(): Promise<UdpStatsdServer> {
    const socket = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    return new UdpStatsdServer(socket, socket.address().port);
  }

  /** Every line of every datagram. */
  lines(): string[] {
    return this.datagrams.flatMap((datagram) => datagram.split('\n'));
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }
}

export class TcpStatsdServer {
  private text = '';
  /** Connections accepted so far. */
  connections = 0;
  private readonly sockets = new Set<net.Socket>();

  private constructor(
    private readonly server: net.Server,
    readonly port: number,
  ) {}

  static async start(): Promise<TcpStatsdServer> {
    const server = net.createServer();
    const port = await listen(server);
    const peer = new TcpStatsdServer(server, port);
    server.on('connection', (socket) => peer.accept(socket));
    return peer;
  }

  /** The lines received, each ended by a newline (a line still arriving is left out). */
  lines(): string[] {
    return this.text.split('\n').slice(0, -1);
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(socket: net.Socket): void {
    this.connections++;
    this.sockets.add(socket);
    socket.on('data', (data: Buffer) => (this.text += data.toString()));
    socket.on('close', () => this.sockets.delete(socket));
  }
}

/** A StreamMetricsMessage as the server decoded it (snake_case, enums by name, 64-bit integers as numbers). */
export interface MetricsMessage {
  readonly identifier?: { readonly node: { readonly id: string; readonly cluster: string; readonly user_agent_name?: string } };
  readonly envoy_metrics: readonly MetricFamilyMessage[];
}

export interface MetricFamilyMessage {
  readonly name: string;
  readonly type: 'COUNTER' | 'GAUGE' | 'SUMMARY' | 'HISTOGRAM' | 'UNTYPED';
  readonly metric: readonly {
    readonly timestamp_ms: number;
    readonly counter?: { readonly value: number };
    readonly gauge?: { readonly value: number };
    readonly summary?: { readonly quantile: readonly { readonly quantile: number; readonly value: number }[] };
    readonly histogram?: { readonly sample_count: number; readonly sample_sum: number; readonly bucket: readonly { readonly upper_bound: number; readonly cumulative_count: number }[] };
  }[];
}

export interface MetricsStream {
  /** The method path the stream was opened on. */
  readonly path: string;
  readonly messages: MetricsMessage[];
  /** Ends the stream from the server's side (an OK status with the empty response). */
  end(): void;
}

const METRICS_PATHS = ['/envoy.service.metrics.v3.MetricsService/StreamMetrics', '/envoy.service.metrics.v2.MetricsService/StreamMetrics'];

export class MetricsServiceServer {
  /** Every stream opened, in order. */
  readonly streams: MetricsStream[] = [];

  private constructor(
    private readonly server: grpc.Server,
    readonly port: number,
  ) {}

  static async start(): Promise<MetricsServiceServer> {
    const server = new grpc.Server();
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
    );
    const peer = new MetricsServiceServer(server, port);
    const messageType = protoSchema().root.lookupType('envoy.service.metrics.v3.StreamMetricsMessage');
    const identity = (bytes: Buffer) => bytes;
    const definition: grpc.ServiceDefinition = Object.fromEntries(
      METRICS_PATHS.map((path) => [
        path,
        { path, requestStream: true, responseStream: false, requestSerialize: identity, requestDeserialize: identity, responseSerialize: identity, responseDeserialize: identity },
      ]),
    );
    const handler = (path: string) => (call: grpc.ServerReadableStream<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
      let ended = false;
      const end = () => {
        if (ended) return;
        ended = true;
        callback(null, Buffer.alloc(0));
      };
      const stream: MetricsStream = { path, messages: [], end };
      peer.streams.push(stream);
      call.on('data', (bytes: Buffer) => {
        const decoded = messageType.toObject(messageType.decode(bytes), { longs: Number, enums: String, arrays: true });
        stream.messages.push(decoded as MetricsMessage);
      });
      call.on('end', end);
      call.on('error', () => (ended = true));
    };
    server.addService(definition, Object.fromEntries(METRICS_PATHS.map((path) => [path, handler(path)])));
    return peer;
  }

  /** Every message of every stream opened on `path`, in order. */
  messages(path: string): MetricsMessage[] {
    return this.streams.filter((stream) => stream.path === path).flatMap((stream) => stream.messages);
  }

  close(): void {
    this.server.forceShutdown();
  }
}
