// Decoding what a config source delivered (a DiscoveryResponse, from a file, REST or gRPC) into
// the resources a subscriber reads. Unknown fields follow the --reject-unknown-dynamic-fields /
// --ignore-unknown-dynamic-fields policy: by default each distinct one is logged once and counted
// in server.dynamic_unknown_fields, as Envoy's warning validation visitor does.

import type { Logger } from '../../log/logger_api';
import type { Counter } from '../../stats/stats';
import { FieldError } from '../errors';
import { childPath, indexPath } from '../field_path';
import { isJsonObject, type JsonObject, type JsonValue } from '../json';
import { decodeProtoJson } from '../proto_json';
import type { ProtoSchema } from '../schema';
import type { ResourceType } from './resource_types';
import type { DecodedResource } from './subscription';

const DISCOVERY_RESPONSE = 'envoy.service.discovery.v3.DiscoveryResponse';

/** What the command line says about unknown fields in dynamic configuration. */
export type UnknownDynamicFields = 'warn' | 'reject' | 'ignore';

export interface DecodedResponse {
  readonly versionInfo: string;
  readonly nonce: string;
  readonly resources: readonly DecodedResource[];
}

export class ResourceDecoder {
  /** Unknown field paths already reported: each is logged and counted once per process. */
  private readonly reported = new Set<string>();

  constructor(
    private readonly schema: ProtoSchema,
    private readonly policy: UnknownDynamicFields,
    private readonly unknownFieldsCounter: Counter,
    private readonly log: Logger,
  ) {}

  /** Unknown fields are skipped and reported rather than rejected: how a transport decodes a binary payload. */
  unknownFieldsAllowed(): boolean {
    return this.policy !== 'reject';
  }

  /**
   * @param response a DiscoveryResponse in its ProtoJSON (snake_case) form
   * @throws FieldError at the path of the first invalid field: the update is rejected
   */
  decode(response: JsonValue, type: ResourceType): DecodedResponse {
    const decoded = decodeProtoJson(this.schema, this.schema.root.lookupType(DISCOVERY_RESPONSE), response, {
      allowUnknownFields: this.unknownFieldsAllowed(),
    });
    this.report(decoded.unknownFields);
    const json = decoded.json;
    const resources = Array.isArray(json['resources']) ? json['resources'] : [];
    return {
      versionInfo: typeof json['version_info'] === 'string' ? json['version_info'] : '',
      nonce: typeof json['nonce'] === 'string' ? json['nonce'] : '',
      resources: resources.map((resource, i) => this.resource(resource, type, indexPath('resources', i))),
    };
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
      throw new FieldError(childPath(path, '@type'), `${String(url)} does not match the subscription's type ${type.v3TypeName}`);
    }
    const name = (resource as JsonObject)[type.nameField];
    if (typeof name !== 'string' || name === '') throw new FieldError(childPath(path, type.nameField), 'a resource needs a name');
    return { name, resource };
  }
}
