// Decoding what a config source delivered (a DiscoveryResponse, from a file, REST or gRPC) into
// the resources a subscriber reads. Unknown fields follow the --reject-unknown-dynamic-fields /
// --ignore-unknown-dynamic-fields policy: by default each distinct one is logged once and counted
// in server.dynamic_unknown_fields, as Envoy's warning validation visitor does.

import { forEachInSlices } from '../../common/event_loop_slices';
import type { Logger } from '../../log/logger_api';
import type { Counter } from '../../stats/stats';
import { FieldError } from '../errors';
import { childPath, indexPath } from '../field_path';
import { isJsonObject, type JsonObject, type JsonValue, repeatedValues } from '../json';
import { decodeProtoJson } from '../proto_json';
import type { ProtoSchema } from '../schema';
import type { ResourceType } from './resource_types';
import type { DecodedResource } from './subscription';

const DISCOVERY_RESPONSE = 'envoy.service.discovery.v3.DiscoveryResponse';
const ANY = 'google.protobuf.Any';
/** Resources decoded per turn of the event loop (a few tens of milliseconds): a 10,000-cluster response must not hold it. */
const DECODE_SLICE = 250;

/**
 * A response as its transport read it, its resources still to decode (one at a time, so that a
 * large response is decoded in slices): the envelope (version_info, nonce, ...) as ProtoJSON,
 * and a function per resource giving its Any as snake_case JSON at `path`.
 */
export interface ResponseParts {
  readonly envelope: JsonValue;
  readonly resources: ReadonlyArray<(path: string) => { readonly json: JsonValue; readonly unknownFields: readonly string[] }>;
}

/** What the command line says about unknown fields in dynamic configuration. */
export type UnknownDynamicFields = 'warn' | 'reject' | 'ignore';

export interface DecodedResponse {
  readonly versionInfo: string;
  readonly nonce: string;
  readonly resources: readonly DecodedResource[];
}

/**
 * A resource that decoded but that the subscription cannot take (of another type, or without a
 * name): the response was read, and is refused, as Envoy's resource decoder refuses it.
 */
export class UnusableResourceError extends FieldError {}

export class ResourceDecoder {
  private readonly log: Logger;
  /** Unknown field paths already reported: each is logged and counted once per process. */
  private readonly reported = new Set<string>();

  constructor(
    private readonly schema: ProtoSchema,
    private readonly policy: UnknownDynamicFields,
    private readonly unknownFieldsCounter: Counter,
    log: Logger,
  ) {
    this.log = log.forFile(__filename);
  }

  /** Unknown fields are skipped and reported rather than rejected: how a transport decodes a binary payload. */
  unknownFieldsAllowed(): boolean {
    return this.policy !== 'reject';
  }

  /**
   * @param response a DiscoveryResponse in its ProtoJSON (snake_case) form
   * @throws FieldError at the path of the first invalid field (the promise rejects): the update is rejected
   */
  decode(response: JsonValue, type: ResourceType): Promise<DecodedResponse> {
    const resources = isJsonObject(response) ? response['resources'] : undefined;
    // A single resource (an object) is a list of one, as protobuf's JSON parser reads it; anything
    // else is left to the envelope's decoding, which says what is wrong.
    if (!Array.isArray(resources) && !isJsonObject(resources)) return this.decodeParts({ envelope: response, resources: [] }, type);
    const { resources: _, ...envelope } = response as JsonObject;
    const any = this.schema.root.lookupType(ANY);
    const options = { allowUnknownFields: this.unknownFieldsAllowed() };
    return this.decodeParts(
      { envelope, resources: repeatedValues(resources).map((resource) => (path: string) => decodeProtoJson(this.schema, any, resource, options, path)) },
      type,
    );
  }

  /**
   * Decodes the envelope, then the resources (decodeResources).
   * @throws FieldError at the path of the first invalid field (the promise rejects)
   */
  async decodeParts(parts: ResponseParts, type: ResourceType): Promise<DecodedResponse> {
    const decoded = decodeProtoJson(this.schema, this.schema.root.lookupType(DISCOVERY_RESPONSE), parts.envelope, {
      allowUnknownFields: this.unknownFieldsAllowed(),
    });
    this.report(decoded.unknownFields);
    const json = decoded.json;
    const resources = await this.decodeResources(parts.resources, type, (i) => indexPath('resources', i));
    return {
      versionInfo: typeof json['version_info'] === 'string' ? json['version_info'] : '',
      nonce: typeof json['nonce'] === 'string' ? json['nonce'] : '',
      resources,
    };
  }

  /**
   * Decodes resources DECODE_SLICE at a time with a turn of the event loop between slices.
   * @param pathOf where the i-th resource (its Any) sits in its response
   * @throws FieldError at the path of the first invalid field (the promise rejects)
   */
  async decodeResources(resources: ResponseParts['resources'], type: ResourceType, pathOf: (i: number) => string): Promise<DecodedResource[]> {
    const decoded: DecodedResource[] = [];
    await forEachInSlices(resources, DECODE_SLICE, (decodeResource, i) => {
      const path = pathOf(i);
      const resource = decodeResource(path);
      this.report(resource.unknownFields);
      decoded.push(this.resource(resource.json, type, path));
    });
    return decoded;
  }

  /** Reports unknown fields found elsewhere (a binary payload's) under the same policy. */
  report(unknownFields: readonly string[]): void {
    if (this.policy === 'ignore') return;
    for (const path of unknownFields) {
      if (this.reported.has(path)) continue;
      this.reported.add(path);
      this.log.warn(`Unknown field: ${path} in dynamic configuration`);
      this.unknownFieldsCounter.inc();
    }
  }

  private resource(value: JsonValue, type: ResourceType, path: string): DecodedResource {
    if (!isJsonObject(value)) throw new FieldError(path, 'expected a resource');
    const { '@type': url, ...resource } = value;
    // proto_json resolved the URL to its v3 name: a v2 resource reads as its v3 successor.
    if (url !== `type.googleapis.com/${type.v3TypeName}`) {
      throw new UnusableResourceError(childPath(path, '@type'), `${String(url)} does not match the subscription's type ${type.v3TypeName}`);
    }
    const name = (resource as JsonObject)[type.nameField];
    if (typeof name !== 'string' || name === '') throw new UnusableResourceError(childPath(path, type.nameField), 'a resource needs a name');
    return { name, resource };
  }
}
