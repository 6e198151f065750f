// The rate limit service's messages (envoy.service.ratelimit.v3 RateLimitRequest and
// RateLimitResponse; v2's share their field numbers, so the same bytes serve either method), and
// what the filter reads of an answer, as Envoy 1.16's GrpcClientImpl reads it. Pure.

import * as protobuf from 'protobufjs/light';
import { utf8Bytes } from '../../common/byte_string';
import type { ProtoSchema } from '../../config/schema';
import { TOKEN } from '../../http/http1/grammar';
import type { Descriptor } from './rate_limit_descriptors';

const REQUEST = 'envoy.service.ratelimit.v3.RateLimitRequest';
const RESPONSE = 'envoy.service.ratelimit.v3.RateLimitResponse';

/** A DescriptorStatus as the x-ratelimit-* headers read it. */
export interface DescriptorStatus {
  /** current_limit; null when the service sent none. */
  readonly currentLimit: { readonly requestsPerUnit: number; readonly unit: string; readonly name: string } | null;
  readonly limitRemaining: number;
  /** duration_until_reset's whole seconds. */
  readonly resetSeconds: number;
}

export interface RateLimitAnswer {
  /** overall_code OVER_LIMIT; any other code lets the request go on, as in Envoy. */
  readonly overLimit: boolean;
  readonly statuses: readonly DescriptorStatus[];
  /** response_headers_to_add (v2: headers), [name, value, ...], names in lower case. */
  readonly responseHeaders: readonly string[];
  /** request_headers_to_add, [name, value, ...], names in lower case. */
  readonly requestHeaders: readonly string[];
}

interface HeaderValue {
  readonly key?: string;
  readonly value?: string;
}

interface ResponseObject {
  readonly overall_code?: string;
  readonly statuses?: readonly {
    readonly current_limit?: { readonly requests_per_unit?: number; readonly unit?: string; readonly name?: string };
    readonly limit_remaining?: number;
    readonly duration_until_reset?: { readonly seconds?: number };
  }[];
  readonly response_headers_to_add?: readonly HeaderValue[];
  readonly request_headers_to_add?: readonly HeaderValue[];
}

export class RateLimitMessages {
  private readonly request: protobuf.Type;
  private readonly response: protobuf.Type;

  constructor(schema: ProtoSchema) {
    this.request = schema.root.lookupType(REQUEST);
    this.response = schema.root.lookupType(RESPONSE);
  }

  /** A RateLimitRequest for `domain`'s descriptors (hits_addend unset: one hit). */
  encodeRequest(domain: string, descriptors: readonly Descriptor[]): Buffer {
    const message = this.request.fromObject({ domain, descriptors: descriptors.map((entries) => ({ entries })) });
    return Buffer.from(this.request.encode(message).finish());
  }

  /** A RateLimitResponse; null when the bytes are none (the call failed, as Envoy's gRPC client fails it). */
  decodeResponse(bytes: Buffer): RateLimitAnswer | null {
    let answer: ResponseObject;
    try {
      answer = this.response.toObject(this.response.decode(bytes), { enums: String, longs: Number }) as ResponseObject;
    } catch {
      return null;
    }
    return {
      overLimit: answer.overall_code === 'OVER_LIMIT',
      statuses: (answer.statuses ?? []).map((status) => {
        const limit = status.current_limit;
        return {
          currentLimit: limit === undefined ? null : { requestsPerUnit: limit.requests_per_unit ?? 0, unit: limit.unit ?? 'UNKNOWN', name: limit.name ?? '' },
          limitRemaining: status.limit_remaining ?? 0,
          resetSeconds: status.duration_until_reset?.seconds ?? 0,
        };
      }),
      responseHeaders: headerList(answer.response_headers_to_add),
      requestHeaders: headerList(answer.request_headers_to_add),
    };
  }
}

/** What no header value may hold: the service's word does not get to split a message. */
const NOT_IN_VALUE = /[\0\r\n]/;

/** The service's headers, less those no message could carry (no token for a name, a line break in a value). */
function headerList(values: readonly HeaderValue[] | undefined): string[] {
  const headers: string[] = [];
  for (const { key = '', value = '' } of values ?? []) {
    // A proto string is Unicode; a header value goes out as its UTF-8 bytes, as Envoy sends it.
    if (TOKEN.test(key) && !NOT_IN_VALUE.test(value)) headers.push(key.toLowerCase(), utf8Bytes(value));
  }
  return headers;
}
