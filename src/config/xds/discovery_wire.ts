// DiscoveryRequest and DiscoveryResponse on the wire: the gRPC method paths of each transport
// version, REST paths, and the protobuf encoding of both messages. V2 and V3 messages share their
// field numbers (the node's too), so the v3 types encode both; only paths and type URLs differ.

import * as protobuf from 'protobufjs/light';
import * as protojson from 'protobufjs/ext/protojson';
import { FieldError } from '../errors';
import { indexPath } from '../field_path';
import type { JsonObject, JsonValue } from '../json';
import { decodeBinary, messageAsJson } from '../proto_file';
import type { ProtoSchema } from '../schema';
import type { ResponseParts } from './resource_decoder';
import type { ResourceType } from './resource_types';

const DISCOVERY_REQUEST = 'envoy.service.discovery.v3.DiscoveryRequest';
const DISCOVERY_RESPONSE = 'envoy.service.discovery.v3.DiscoveryResponse';
const ANY = 'google.protobuf.Any';

/** google.rpc.Code INTERNAL: what Envoy 1.16 puts in a NACK's error_detail. */
export const NACK_STATUS_CODE = 13;
/** Envoy truncates a NACK's message to this many characters (Utility::truncateGrpcStatusMessage). */
const MAX_ERROR_DETAIL_LENGTH = 4096;

export type TransportVersion = 'V2' | 'V3';

/** One request of a state-of-the-world stream (or REST poll), snake_case. */
export interface DiscoveryRequest {
  readonly versionInfo: string;
  readonly node: JsonObject | null;
  readonly resourceNames: readonly string[];
  readonly typeUrl: string;
  readonly responseNonce: string;
  readonly errorDetail: string | null;
}

/** What a transport reads of a response before decoding its resources. */
export interface ResponseHeader {
  readonly typeUrl: string;
  readonly versionInfo: string;
  readonly nonce: string;
  readonly resourceCount: number;
}

const ADS_SERVICES: Readonly<Record<TransportVersion, string>> = {
  V3: 'envoy.service.discovery.v3.AggregatedDiscoveryService',
  V2: 'envoy.service.discovery.v2.AggregatedDiscoveryService',
};

/** The per-type service of each resource type, by its v3 name: v3 and v2 service names. */
const TYPE_SERVICES: ReadonlyMap<string, { readonly v3: string; readonly v2: string; readonly method: string; readonly rest: string }> = new Map([
  [
    'envoy.config.cluster.v3.Cluster',
    { v3: 'envoy.service.cluster.v3.ClusterDiscoveryService', v2: 'envoy.api.v2.ClusterDiscoveryService', method: 'Clusters', rest: 'clusters' },
  ],
  [
    'envoy.config.endpoint.v3.ClusterLoadAssignment',
    { v3: 'envoy.service.endpoint.v3.EndpointDiscoveryService', v2: 'envoy.api.v2.EndpointDiscoveryService', method: 'Endpoints', rest: 'endpoints' },
  ],
  [
    'envoy.service.runtime.v3.Runtime',
    { v3: 'envoy.service.runtime.v3.RuntimeDiscoveryService', v2: 'envoy.service.discovery.v2.RuntimeDiscoveryService', method: 'Runtime', rest: 'runtime' },
  ],
  [
    'envoy.config.route.v3.RouteConfiguration',
    { v3: 'envoy.service.route.v3.RouteDiscoveryService', v2: 'envoy.api.v2.RouteDiscoveryService', method: 'Routes', rest: 'routes' },
  ],
  [
    'envoy.config.listener.v3.Listener',
    { v3: 'envoy.service.listener.v3.ListenerDiscoveryService', v2: 'envoy.api.v2.ListenerDiscoveryService', method: 'Listeners', rest: 'listeners' },
  ],
  [
    'envoy.extensions.transport_sockets.tls.v3.Secret',
    { v3: 'envoy.service.secret.v3.SecretDiscoveryService', v2: 'envoy.service.discovery.v2.SecretDiscoveryService', method: 'Secrets', rest: 'secrets' },
  ],
]);

function typeService(type: ResourceType) {
  const service = TYPE_SERVICES.get(type.v3TypeName);
  if (service === undefined) throw new Error(`no discovery service for ${type.v3TypeName}`);
  return service;
}

export function adsMethodPath(version: TransportVersion): string {
  return `/${ADS_SERVICES[version]}/StreamAggregatedResources`;
}

/** The delta xDS method of the aggregated service. */
export function deltaAdsMethodPath(version: TransportVersion): string {
  return `/${ADS_SERVICES[version]}/DeltaAggregatedResources`;
}

/** The streaming method of a type's own service, e.g. /envoy.service.endpoint.v3.EndpointDiscoveryService/StreamEndpoints. */
export function streamMethodPath(type: ResourceType, version: TransportVersion): string {
  const service = typeService(type);
  return `/${version === 'V3' ? service.v3 : service.v2}/Stream${service.method}`;
}

/** The delta xDS method of a type's own service, e.g. /envoy.service.cluster.v3.ClusterDiscoveryService/DeltaClusters. */
export function deltaMethodPath(type: ResourceType, version: TransportVersion): string {
  const service = typeService(type);
  return `/${version === 'V3' ? service.v3 : service.v2}/Delta${service.method}`;
}

/** The REST path of a type, e.g. /v3/discovery:endpoints. */
export function restPath(type: ResourceType, version: TransportVersion): string {
  return `/${version === 'V3' ? 'v3' : 'v2'}/discovery:${typeService(type).rest}`;
}

export class DiscoveryWire {
  private readonly requestType: protobuf.Type;
  private readonly responseType: protobuf.Type;

  constructor(private readonly schema: ProtoSchema) {
    this.requestType = schema.root.lookupType(DISCOVERY_REQUEST);
    this.responseType = schema.root.lookupType(DISCOVERY_RESPONSE);
  }

  /** The request as ProtoJSON (lowerCamelCase), as Envoy posts it to a REST server. */
  requestJson(request: DiscoveryRequest): JsonValue {
    return protojson.toJson(this.requestType, this.requestMessage(request)) as JsonValue;
  }

  encodeRequest(request: DiscoveryRequest): Buffer {
    return Buffer.from(this.requestType.encode(this.requestMessage(request)).finish());
  }

  /**
   * The response's type URL, version and nonce, its resources left undecoded: enough to find the
   * watches and to answer even when the resources are invalid.
   * @throws FieldError when the bytes are not a DiscoveryResponse
   */
  responseHeader(bytes: Uint8Array): ResponseHeader {
    let message: Record<string, unknown>;
    try {
      message = this.responseType.decode(bytes) as unknown as Record<string, unknown>;
    } catch (error) {
      throw new FieldError('', `not a binary DiscoveryResponse: ${(error as Error).message}`);
    }
    const resources = message['resources'];
    return {
      typeUrl: String(message['type_url'] ?? ''),
      versionInfo: String(message['version_info'] ?? ''),
      nonce: String(message['nonce'] ?? ''),
      resourceCount: Array.isArray(resources) ? resources.length : 0,
    };
  }

  /**
   * The response in parts, for ResourceDecoder.decodeParts: the envelope decoded now, each
   * resource when the decoder gets to it (a large response is decoded in slices).
   * @throws FieldError for a resource whose type is not the response's (a resource that fails to decode throws when it is)
   */
  decodeResponse(bytes: Uint8Array, allowUnknownFields: boolean): ResponseParts & { readonly unknownFields: readonly string[] } {
    const message = decodeBinary(this.responseType, bytes, '') as protobuf.Message & { type_url?: string; resources?: Array<protobuf.Message & { type_url?: string }> };
    const resources = message.resources ?? [];
    resources.forEach((resource, i) => {
      // Envoy's check, before the resource is decoded (a v2 URL in a v3 response included).
      if (resource.type_url !== message.type_url) {
        throw new FieldError(indexPath('resources', i), `${resource.type_url ?? ''} does not match the message-wide type URL ${message.type_url ?? ''}`);
      }
    });
    message.resources = [];
    const options = { allowUnknownFields };
    const envelope = messageAsJson(this.schema, this.responseType, message, options);
    const any = this.schema.root.lookupType(ANY);
    return {
      envelope: envelope.json,
      unknownFields: envelope.unknownFields,
      // An Any of the response sits at depth 2 for the nesting limit, as when decoded with it.
      resources: resources.map((resource) => (path: string) => messageAsJson(this.schema, any, resource, options, { path, depth: 2 })),
    };
  }

  private requestMessage(request: DiscoveryRequest): protobuf.Message {
    const json: Record<string, unknown> = {
      version_info: request.versionInfo,
      resource_names: [...request.resourceNames],
      type_url: request.typeUrl,
      response_nonce: request.responseNonce,
    };
    if (request.node !== null) json['node'] = request.node;
    if (request.errorDetail !== null) json['error_detail'] = nackStatus(request.errorDetail);
    return protojson.fromJson(this.requestType, json);
  }
}

/** A NACK's error_detail (google.rpc.Status, snake_case JSON), its message cut as Envoy cuts it. */
export function nackStatus(message: string): { readonly code: number; readonly message: string } {
  return { code: NACK_STATUS_CODE, message: message.length <= MAX_ERROR_DETAIL_LENGTH ? message : `${message.slice(0, MAX_ERROR_DETAIL_LENGTH)}...(truncated)` };
}
