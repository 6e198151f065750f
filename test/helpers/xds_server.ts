// A state-of-the-world xDS management server for tests, on @grpc/grpc-js over loopback: the ADS
// and per-type services (CDS, EDS, RTDS, RDS, LDS, SDS) at their v3 and v2 paths, and the REST paths on a node:http
// server. It serves whatever resources the test sets (any type URL; resources are ProtoJSON with
// `@type`, v2 URLs encoded as their v3 successors), records every request, pushes a new version
// to every stream that asked for the type, and drops streams on demand. A stream is sent a type's
// current version when it has not had it yet (a first request carrying it counts), so neither a
// NACK nor a resubscription at that version is answered with the same response. The delta
// methods serve the same resources (`delta`, xds_delta_streams.ts).

import * as grpc from '@grpc/grpc-js';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as protojson from 'protobufjs/ext/protojson';
import type { JsonObject } from '../../src/config/json';
import { protoSchema } from '../../src/config/schema';
import { encodeAny } from './xds_any';
import { deltaPaths, DeltaStreams } from './xds_delta_streams';

const REQUEST = 'envoy.service.discovery.v3.DiscoveryRequest';
const RESPONSE = 'envoy.service.discovery.v3.DiscoveryResponse';

const STREAM_PATHS = [
  '/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources',
  '/envoy.service.discovery.v2.AggregatedDiscoveryService/StreamAggregatedResources',
  '/envoy.service.cluster.v3.ClusterDiscoveryService/StreamClusters',
  '/envoy.api.v2.ClusterDiscoveryService/StreamClusters',
  '/envoy.service.endpoint.v3.EndpointDiscoveryService/StreamEndpoints',
  '/envoy.api.v2.EndpointDiscoveryService/StreamEndpoints',
  '/envoy.service.runtime.v3.RuntimeDiscoveryService/StreamRuntime',
  '/envoy.service.discovery.v2.RuntimeDiscoveryService/StreamRuntime',
  '/envoy.service.route.v3.RouteDiscoveryService/StreamRoutes',
  '/envoy.api.v2.RouteDiscoveryService/StreamRoutes',
  '/envoy.service.listener.v3.ListenerDiscoveryService/StreamListeners',
  '/envoy.api.v2.ListenerDiscoveryService/StreamListeners',
  '/envoy.service.secret.v3.SecretDiscoveryService/StreamSecrets',
  '/envoy.service.discovery.v2.SecretDiscoveryService/StreamSecrets',
];

/** A request as the server decoded it (snake_case, defaults filled in). */
export interface RecordedRequest {
  /** The gRPC method path, or the REST path. */
  readonly path: string;
  /** Which stream (1, 2, ... in order of opening); 0 for REST. */
  readonly stream: number;
  readonly version_info: string;
  readonly node: JsonObject | null;
  readonly resource_names: readonly string[];
  readonly type_url: string;
  readonly response_nonce: string;
  readonly error_detail: { readonly code: number; readonly message: string } | null;
}

interface Snapshot {
  readonly version: string;
  readonly resources: readonly JsonObject[];
}

interface OpenStream {
  readonly id: number;
  readonly call: grpc.ServerDuplexStream<Buffer, Buffer>;
  /** The version last sent, by type URL. */
  readonly sent: Map<string, string>;
}

export class XdsServer {
  readonly requests: RecordedRequest[] = [];
  /** REST answers: 200 with the current resources unless set to another status. */
  restStatus = 200;
  private readonly snapshots = new Map<string, Snapshot>();
  private readonly streams = new Set<OpenStream>();
  private streamCount = 0;
  private nonce = 0;
  private readonly schema = protoSchema();
  /** The delta xDS streams, their requests and responses. */
  readonly delta = new DeltaStreams(this.schema);

  private constructor(
    private readonly grpcServer: grpc.Server,
    private readonly restServer: http.Server,
    /** The gRPC port. */
    readonly port: number,
    /** The REST port. */
    readonly restPort: number,
  ) {}

  static async start(): Promise<XdsServer> {
    const grpcServer = new grpc.Server();
    const restServer = http.createServer();
    await new Promise<void>((resolve) => restServer.listen(0, '127.0.0.1', resolve));
    const port = await new Promise<number>((resolve, reject) =>
      grpcServer.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
    );
    const server = new XdsServer(grpcServer, restServer, port, (restServer.address() as AddressInfo).port);
    const identity = (bytes: Buffer) => bytes;
    const deltaMethods = deltaPaths(STREAM_PATHS);
    const definition: grpc.ServiceDefinition = Object.fromEntries(
      [...STREAM_PATHS, ...deltaMethods].map((path) => [
        path,
        { path, requestStream: true, responseStream: true, requestSerialize: identity, requestDeserialize: identity, responseSerialize: identity, responseDeserialize: identity },
      ]),
    );
    const handlers = Object.fromEntries([
      ...STREAM_PATHS.map((path) => [path, (call: grpc.ServerDuplexStream<Buffer, Buffer>) => server.serveStream(path, call)]),
      ...deltaMethods.map((path) => [path, (call: grpc.ServerDuplexStream<Buffer, Buffer>) => server.delta.serve(path, call)]),
    ]);
    grpcServer.addService(definition, handlers);
    restServer.on('request', (req, res) => server.serveRest(req, res));
    return server;
  }

  /** Sets a type's resources at `version` and sends them to every stream that asked for the type. */
  setResources(typeUrl: string, version: string, resources: readonly JsonObject[]): void {
    this.snapshots.set(typeUrl, { version, resources });
    for (const stream of this.streams) {
      if (stream.sent.has(typeUrl)) this.send(stream, typeUrl);
    }
    this.delta.setResources(typeUrl, version, resources);
  }

  /** Ends every open stream (status OK from the server's side: the client sees the stream close). */
  dropStreams(): void {
    for (const stream of this.streams) stream.call.end();
    this.streams.clear();
    this.delta.dropStreams();
  }

  get openStreams(): number {
    return this.streams.size + this.delta.openStreams;
  }

  /** The nonce of the last response sent. */
  get lastNonce(): string {
    return String(this.nonce);
  }

  async close(): Promise<void> {
    this.dropStreams();
    this.grpcServer.forceShutdown();
    this.restServer.closeAllConnections();
    await new Promise<void>((resolve) => this.restServer.close(() => resolve()));
  }

  private serveStream(path: string, call: grpc.ServerDuplexStream<Buffer, Buffer>): void {
    const stream: OpenStream = { id: ++this.streamCount, call, sent: new Map() };
    this.streams.add(stream);
    call.on('data', (bytes: Buffer) => {
      const request = this.decodeRequest(path, stream.id, bytes);
      this.requests.push(request);
      const snapshot = this.snapshots.get(request.type_url);
      // A resubscription that already has the current version is not sent it again.
      if (!stream.sent.has(request.type_url)) stream.sent.set(request.type_url, request.version_info);
      if (snapshot !== undefined && stream.sent.get(request.type_url) !== snapshot.version) this.send(stream, request.type_url);
    });
    call.on('end', () => {
      this.streams.delete(stream);
      call.end();
    });
    call.on('error', () => this.streams.delete(stream));
    call.on('cancelled', () => this.streams.delete(stream));
  }

  private send(stream: OpenStream, typeUrl: string): void {
    const snapshot = this.snapshots.get(typeUrl);
    if (snapshot === undefined) return;
    stream.sent.set(typeUrl, snapshot.version);
    stream.call.write(this.encodeResponse(typeUrl, snapshot));
  }

  private serveRest(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const type = this.schema.root.lookupType(REQUEST);
      const message = protojson.fromJson(type, JSON.parse(Buffer.concat(chunks).toString('utf8')));
      const request = this.recorded(req.url ?? '', 0, type.toObject(message, { defaults: true, arrays: true }));
      this.requests.push(request);
      const snapshot = this.snapshots.get(request.type_url);
      if (this.restStatus !== 200 || snapshot === undefined) {
        res.writeHead(this.restStatus === 200 ? 503 : this.restStatus).end();
        return;
      }
      const response = this.schema.root.lookupType(RESPONSE);
      const body = protojson.toJson(response, response.decode(this.encodeResponse(request.type_url, snapshot)));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  }

  private decodeRequest(path: string, stream: number, bytes: Buffer): RecordedRequest {
    const type = this.schema.root.lookupType(REQUEST);
    return this.recorded(path, stream, type.toObject(type.decode(bytes), { defaults: true, arrays: true }));
  }

  private recorded(path: string, stream: number, object: Record<string, unknown>): RecordedRequest {
    const detail = object['error_detail'] as { code: number; message: string } | undefined | null;
    return {
      path,
      stream,
      version_info: String(object['version_info'] ?? ''),
      node: (object['node'] as JsonObject | undefined) ?? null,
      resource_names: (object['resource_names'] as string[] | undefined) ?? [],
      type_url: String(object['type_url'] ?? ''),
      response_nonce: String(object['response_nonce'] ?? ''),
      error_detail: detail ? { code: detail.code, message: detail.message } : null,
    };
  }

  private encodeResponse(typeUrl: string, snapshot: Snapshot): Buffer {
    const resources = snapshot.resources.map((resource) => encodeAny(this.schema, resource));
    const type = this.schema.root.lookupType(RESPONSE);
    const nonce = String(++this.nonce);
    return Buffer.from(type.encode(type.fromObject({ version_info: snapshot.version, resources, type_url: typeUrl, nonce })).finish());
  }
}
