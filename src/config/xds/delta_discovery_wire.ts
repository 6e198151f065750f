// DeltaDiscoveryRequest and DeltaDiscoveryResponse (incremental xDS) on the wire. As with the
// state-of-the-world messages, v2 and v3 share their field numbers, so the v3 types encode both.

import * as protobuf from 'protobufjs/light';
import * as protojson from 'protobufjs/ext/protojson';
import { FieldError } from '../errors';
import { childPath, indexPath } from '../field_path';
import { isJsonObject, type JsonObject, messageList, stringField, stringList } from '../json';
import { decodeBinary, messageAsJson } from '../proto_file';
import type { ProtoSchema } from '../schema';
import { nackStatus } from './discovery_wire';
import type { ResponseParts } from './resource_decoder';

const DELTA_REQUEST = 'envoy.service.discovery.v3.DeltaDiscoveryRequest';
const DELTA_RESPONSE = 'envoy.service.discovery.v3.DeltaDiscoveryResponse';
const ANY = 'google.protobuf.Any';

export interface DeltaDiscoveryRequest {
  readonly typeUrl: string;
  readonly node: JsonObject | null;
  readonly resourceNamesSubscribe: readonly string[];
  readonly resourceNamesUnsubscribe: readonly string[];
  /** The first request of a stream: the version of each resource held. */
  readonly initialResourceVersions: ReadonlyMap<string, string>;
  readonly responseNonce: string;
  readonly errorDetail: string | null;
}

/** What the mux reads of a response before decoding it: enough to answer even a bad one. */
export interface DeltaResponseHeader {
  readonly typeUrl: string;
  readonly systemVersionInfo: string;
  readonly nonce: string;
}

/** An added or changed resource, as its Resource wrapper names it. */
export interface DeltaResourceEntry {
  readonly name: string;
  readonly version: string;
  /** Where its Any sits in the response: `resources[<i>].resource`. */
  readonly path: string;
}

export interface DeltaResponseParts {
  readonly added: readonly DeltaResourceEntry[];
  /** The Any of each added resource, in the same order, for ResourceDecoder.decodeResources. */
  readonly contents: ResponseParts['resources'];
  readonly removed: readonly string[];
  /** The envelope's and the wrappers' unknown fields (the Anys' are the decoder's). */
  readonly unknownFields: readonly string[];
}

type AnyMessage = protobuf.Message & { type_url?: string };
type ResourceMessage = protobuf.Message & { resource?: AnyMessage | null };

export class DeltaDiscoveryWire {
  private readonly requestType: protobuf.Type;
  private readonly responseType: protobuf.Type;

  constructor(private readonly schema: ProtoSchema) {
    this.requestType = schema.root.lookupType(DELTA_REQUEST);
    this.responseType = schema.root.lookupType(DELTA_RESPONSE);
  }

  encodeRequest(request: DeltaDiscoveryRequest): Buffer {
    const json: Record<string, unknown> = {
      type_url: request.typeUrl,
      resource_names_subscribe: [...request.resourceNamesSubscribe],
      resource_names_unsubscribe: [...request.resourceNamesUnsubscribe],
      initial_resource_versions: Object.fromEntries(request.initialResourceVersions),
      response_nonce: request.responseNonce,
    };
    if (request.node !== null) json['node'] = request.node;
    if (request.errorDetail !== null) json['error_detail'] = nackStatus(request.errorDetail);
    return Buffer.from(this.requestType.encode(protojson.fromJson(this.requestType, json)).finish());
  }

  /** @throws FieldError when the bytes are not a DeltaDiscoveryResponse */
  responseHeader(bytes: Uint8Array): DeltaResponseHeader {
    let message: Record<string, unknown>;
    try {
      message = this.responseType.decode(bytes) as unknown as Record<string, unknown>;
    } catch (error) {
      throw new FieldError('', `not a binary DeltaDiscoveryResponse: ${(error as Error).message}`);
    }
    return {
      typeUrl: String(message['type_url'] ?? ''),
      systemVersionInfo: String(message['system_version_info'] ?? ''),
      nonce: String(message['nonce'] ?? ''),
    };
  }

  /**
   * The response in parts: the wrappers' names and versions and the removed names now, each
   * resource's content when the decoder gets to it.
   * @throws FieldError for a resource without content or of a type other than the response's
   */
  decodeResponse(bytes: Uint8Array, allowUnknownFields: boolean): DeltaResponseParts {
    const message = decodeBinary(this.responseType, bytes, '') as protobuf.Message & { type_url?: string; resources?: ResourceMessage[] };
    const wrappers = message.resources ?? [];
    const anys = wrappers.map((wrapper, i) => {
      const any = wrapper.resource ?? null;
      const path = childPath(indexPath('resources', i), 'resource');
      // Envoy's check, before the resource is decoded.
      if (any === null) throw new FieldError(path, 'a resource is required');
      if (any.type_url !== message.type_url) throw new FieldError(path, `${any.type_url ?? ''} does not match the message-wide type URL ${message.type_url ?? ''}`);
      wrapper.resource = null;
      return any;
    });
    const options = { allowUnknownFields };
    // The envelope and the wrappers without their Anys: names, versions, removed names.
    const envelope = messageAsJson(this.schema, this.responseType, message, options);
    const json = isJsonObject(envelope.json) ? envelope.json : {};
    const any = this.schema.root.lookupType(ANY);
    return {
      added: messageList(json, 'resources').map((wrapper, i) => ({
        name: stringField(wrapper, 'name'),
        version: stringField(wrapper, 'version'),
        path: childPath(indexPath('resources', i), 'resource'),
      })),
      // An Any of a response's Resource sits at depth 3 for the nesting limit.
      contents: anys.map((content) => (path: string) => messageAsJson(this.schema, any, content, options, { path, depth: 3 })),
      removed: stringList(json, 'removed_resources'),
      unknownFields: envelope.unknownFields,
    };
  }
}
