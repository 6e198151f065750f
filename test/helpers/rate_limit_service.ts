// A rate limit service for tests, on @grpc/grpc-js over loopback: RateLimitService.ShouldRateLimit
// at its v3 and v2 paths (messages as the schema's v3 types, which v2 shares field numbers with,
// as the xDS test server does), each call recorded and answered as the test's `answer` says.

import * as grpc from '@grpc/grpc-js';
import { protoSchema } from '../../src/config/schema';

export const SHOULD_RATE_LIMIT = {
  V3: '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit',
  V2: '/envoy.service.ratelimit.v2.RateLimitService/ShouldRateLimit',
} as const;

/** One call as the service decoded it. */
export interface RecordedCall {
  readonly path: string;
  readonly domain: string;
  /** Each descriptor's entries as `key=value`. */
  readonly descriptors: readonly (readonly string[])[];
  readonly metadata: Readonly<Record<string, unknown>>;
}

/** A RateLimitResponse (ProtoJSON of the v3 type), a gRPC error status, or an answer after a delay. */
export type Answer = { readonly response: Readonly<Record<string, unknown>>; readonly delayMs?: number } | { readonly error: grpc.status };

export class RateLimitService {
  readonly calls: RecordedCall[] = [];

  private constructor(
    private readonly server: grpc.Server,
    readonly port: number,
  ) {}

  static async start(answer: (call: RecordedCall) => Answer): Promise<RateLimitService> {
    const schema = protoSchema();
    const requestType = schema.root.lookupType('envoy.service.ratelimit.v3.RateLimitRequest');
    const responseType = schema.root.lookupType('envoy.service.ratelimit.v3.RateLimitResponse');
    const server = new grpc.Server();
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
    );
    const service = new RateLimitService(server, port);
    const identity = (bytes: Buffer) => bytes;
    const paths = Object.values(SHOULD_RATE_LIMIT);
    const definition: grpc.ServiceDefinition = Object.fromEntries(
      paths.map((path) => [path, { path, requestStream: false, responseStream: false, requestSerialize: identity, requestDeserialize: identity, responseSerialize: identity, responseDeserialize: identity }]),
    );
    const handle = (path: string) => (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
      const request = requestType.toObject(requestType.decode(call.request), { defaults: true }) as { domain: string; descriptors: { entries: { key: string; value: string }[] }[] };
      const recorded: RecordedCall = {
        path,
        domain: request.domain,
        descriptors: request.descriptors.map((descriptor) => descriptor.entries.map(({ key, value }) => `${key}=${value}`)),
        metadata: call.metadata.getMap(),
      };
      service.calls.push(recorded);
      const outcome = answer(recorded);
      if ('error' in outcome) {
        callback({ code: outcome.error, details: 'the test says no' });
        return;
      }
      const bytes = Buffer.from(responseType.encode(responseType.fromObject(outcome.response)).finish());
      if (outcome.delayMs === undefined) callback(null, bytes);
      else setTimeout(() => callback(null, bytes), outcome.delayMs).unref();
    };
    server.addService(definition, Object.fromEntries(paths.map((path) => [path, handle(path)])));
    return service;
  }

  close(): void {
    this.server.forceShutdown();
  }
}
