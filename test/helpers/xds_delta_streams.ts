// The delta (incremental) xDS side of the test management server (xds_server.ts): the delta
// methods of the ADS and per-type services, v3 and v2 (beside each state-of-the-world one). Per stream and type it tracks what the
// client has (the versions it was sent, or said it had in initial_resource_versions) and what it
// wants (every resource when its first subscribe is empty, else the names it subscribed), and
// sends only the difference: resources added or changed, and the names of those gone
// (removed_resources). Each resource's version is the snapshot version at which it last changed.

import type * as grpc from '@grpc/grpc-js';
import type { JsonObject } from '../../src/config/json';
import type { ProtoSchema } from '../../src/config/schema';
import { encodeAny } from './xds_any';

const REQUEST = 'envoy.service.discovery.v3.DeltaDiscoveryRequest';
const RESPONSE = 'envoy.service.discovery.v3.DeltaDiscoveryResponse';

/** The delta method beside each state-of-the-world method of a service (DeltaClusters for StreamClusters). */
export function deltaPaths(streamPaths: readonly string[]): string[] {
  return streamPaths.map((path) => path.replace(/\/Stream(\w+)$/, '/Delta$1'));
}

/** A delta request as the server decoded it (snake_case, defaults filled in). */
export interface RecordedDeltaRequest {
  readonly path: string;
  /** Which delta stream (1, 2, ... in order of opening). */
  readonly stream: number;
  readonly node: JsonObject | null;
  readonly type_url: string;
  readonly resource_names_subscribe: readonly string[];
  readonly resource_names_unsubscribe: readonly string[];
  readonly initial_resource_versions: Readonly<Record<string, string>>;
  readonly response_nonce: string;
  readonly error_detail: { readonly code: number; readonly message: string } | null;
}

/** What a delta response carried. */
export interface SentDeltaResponse {
  readonly stream: number;
  readonly type_url: string;
  readonly system_version_info: string;
  readonly nonce: string;
  readonly resources: ReadonlyArray<{ readonly name: string; readonly version: string }>;
  readonly removed_resources: readonly string[];
}

interface VersionedResource {
  readonly version: string;
  /** The encoded Any, which tells whether a new snapshot changed the resource. */
  readonly any: { readonly type_url: string; readonly value: Uint8Array };
}

interface DeltaSnapshot {
  readonly version: string;
  readonly resources: ReadonlyMap<string, VersionedResource>;
}

/** What the server believes one stream has and wants of one type. */
interface TypeView {
  wildcard: boolean;
  readonly names: Set<string>;
  readonly has: Map<string, string>;
}

interface DeltaStream {
  readonly id: number;
  readonly call: grpc.ServerDuplexStream<Buffer, Buffer>;
  readonly types: Map<string, TypeView>;
}

/** A resource of a hand-made response (sendResponse), sent as is. */
export interface RawDeltaResource {
  readonly name: string;
  readonly version: string;
  readonly resource: JsonObject;
}

export class DeltaStreams {
  readonly requests: RecordedDeltaRequest[] = [];
  readonly responses: SentDeltaResponse[] = [];
  private readonly snapshots = new Map<string, DeltaSnapshot>();
  private readonly streams = new Set<DeltaStream>();
  private streamCount = 0;
  private nonce = 0;

  constructor(private readonly schema: ProtoSchema) {}

  get openStreams(): number {
    return this.streams.size;
  }

  /** A type's resources at `version`; every stream that asked for the type is sent what changed for it. */
  setResources(typeUrl: string, version: string, resources: readonly JsonObject[]): void {
    const previous = this.snapshots.get(typeUrl)?.resources;
    const next = new Map<string, VersionedResource>();
    for (const resource of resources) {
      const name = String(resource['name'] ?? resource['cluster_name'] ?? '');
      const any = encodeAny(this.schema, resource);
      const before = previous?.get(name);
      const same = before !== undefined && before.any.type_url === any.type_url && Buffer.from(before.any.value).equals(Buffer.from(any.value));
      next.set(name, { version: same ? before.version : version, any });
    }
    this.snapshots.set(typeUrl, { version, resources: next });
    for (const stream of this.streams) {
      if (stream.types.has(typeUrl)) this.sendChanges(stream, typeUrl, false);
    }
  }

  /** Sends a response made by hand to every stream that asked for the type, whatever it has. */
  sendResponse(typeUrl: string, systemVersionInfo: string, resources: readonly RawDeltaResource[], removed: readonly string[] = []): void {
    const wrappers = resources.map((r) => ({ name: r.name, version: r.version, resource: encodeAny(this.schema, r.resource) }));
    for (const stream of this.streams) {
      if (stream.types.has(typeUrl)) this.write(stream, typeUrl, systemVersionInfo, wrappers, removed);
    }
  }

  serve(path: string, call: grpc.ServerDuplexStream<Buffer, Buffer>): void {
    const stream: DeltaStream = { id: ++this.streamCount, call, types: new Map() };
    this.streams.add(stream);
    call.on('data', (bytes: Buffer) => {
      const type = this.schema.root.lookupType(REQUEST);
      const object = type.toObject(type.decode(bytes), { defaults: true, arrays: true, objects: true }) as Record<string, unknown>;
      const detail = object['error_detail'] as { code: number; message: string } | undefined | null;
      const request: RecordedDeltaRequest = {
        path,
        stream: stream.id,
        node: (object['node'] as JsonObject | undefined) ?? null,
        type_url: String(object['type_url'] ?? ''),
        resource_names_subscribe: (object['resource_names_subscribe'] as string[] | undefined) ?? [],
        resource_names_unsubscribe: (object['resource_names_unsubscribe'] as string[] | undefined) ?? [],
        initial_resource_versions: (object['initial_resource_versions'] as Record<string, string> | undefined) ?? {},
        response_nonce: String(object['response_nonce'] ?? ''),
        error_detail: detail ? { code: detail.code, message: detail.message } : null,
      };
      this.requests.push(request);
      this.onRequest(stream, request);
    });
    call.on('end', () => {
      this.streams.delete(stream);
      call.end();
    });
    call.on('error', () => this.streams.delete(stream));
    call.on('cancelled', () => this.streams.delete(stream));
  }

  /** Ends every open stream (status OK from the server's side). */
  dropStreams(): void {
    for (const stream of this.streams) stream.call.end();
    this.streams.clear();
  }

  private onRequest(stream: DeltaStream, request: RecordedDeltaRequest): void {
    let view = stream.types.get(request.type_url);
    const first = view === undefined;
    if (view === undefined) {
      // An empty first subscribe is a wildcard subscription.
      view = { wildcard: request.resource_names_subscribe.length === 0, names: new Set(), has: new Map(Object.entries(request.initial_resource_versions)) };
      stream.types.set(request.type_url, view);
    }
    for (const name of request.resource_names_subscribe) view.names.add(name);
    for (const name of request.resource_names_unsubscribe) {
      view.names.delete(name);
      view.has.delete(name);
    }
    // The first request of a type is answered even when nothing differs, so the client knows.
    this.sendChanges(stream, request.type_url, first);
  }

  private sendChanges(stream: DeltaStream, typeUrl: string, evenIfNone: boolean): void {
    const snapshot = this.snapshots.get(typeUrl);
    const view = stream.types.get(typeUrl);
    if (snapshot === undefined || view === undefined) return;
    const wants = (name: string) => view.wildcard || view.names.has(name);
    const added = [...snapshot.resources].filter(([name, r]) => wants(name) && view.has.get(name) !== r.version);
    const removed = [...view.has.keys()].filter((name) => !snapshot.resources.has(name));
    if (added.length === 0 && removed.length === 0 && !evenIfNone) return;
    for (const [name, r] of added) view.has.set(name, r.version);
    for (const name of removed) view.has.delete(name);
    const wrappers = added.map(([name, r]) => ({ name, version: r.version, resource: r.any }));
    this.write(stream, typeUrl, snapshot.version, wrappers, removed);
  }

  private write(
    stream: DeltaStream,
    typeUrl: string,
    systemVersionInfo: string,
    resources: ReadonlyArray<{ name: string; version: string; resource: { type_url: string; value: Uint8Array } }>,
    removed: readonly string[],
  ): void {
    const type = this.schema.root.lookupType(RESPONSE);
    const nonce = `d${++this.nonce}`;
    const message = type.fromObject({ system_version_info: systemVersionInfo, resources, type_url: typeUrl, removed_resources: removed, nonce });
    stream.call.write(Buffer.from(type.encode(message).finish()));
    this.responses.push({
      stream: stream.id,
      type_url: typeUrl,
      system_version_info: systemVersionInfo,
      nonce,
      resources: resources.map(({ name, version }) => ({ name, version })),
      removed_resources: [...removed],
    });
  }
}
