// How ext_authz asks its service: over the worker's async client to the HTTP service's cluster,
// or as a unary gRPC call of Authorization/Check (v2's or v3's method; Envoy 1.16 sends the v3
// message to both, the two being the same on the wire). A cluster that is gone, a failed call or
// a timeout is an error.

import type * as protobuf from 'protobufjs/light';
import * as protojson from 'protobufjs/ext/protojson';
import type { ExtAuthzGrpcService, ExtAuthzHttpService } from '../../config/model';
import type { AsyncClient, AsyncRequest } from '../../upstream/worker/async_client';
import type { ClusterManager } from '../../upstream/worker/cluster_manager';
import { GrpcUnaryClient } from '../../upstream/worker/grpc_unary_client';
import type { Check } from './ext_authz_check_request';
import { clientHeaderMatcher, requestHeaderMatcher, upstreamHeaderMatcher } from './ext_authz_header_matchers';
import { httpCheckRequest, type HttpRequestSettings } from './ext_authz_http_request';
import { AUTHZ_ERROR, type AuthzResponse, type CheckResponseJson, grpcAuthzResponse, httpAuthzResponse, type HttpResponseMatchers } from './ext_authz_response';

export interface AuthzClient {
  /** `done` may run before this returns, which then returns null; otherwise the call, which may be cancelled. */
  check(check: Check, done: (response: AuthzResponse) => void): AsyncRequest | null;
}

export class HttpAuthzClient implements AuthzClient {
  private readonly request: HttpRequestSettings;
  private readonly response: HttpResponseMatchers;

  constructor(
    private readonly service: ExtAuthzHttpService,
    private readonly clusters: ClusterManager,
    private readonly client: AsyncClient,
  ) {
    this.request = { pathPrefix: service.pathPrefix, requestHeaders: requestHeaderMatcher(service.allowedHeaders), headersToAdd: service.headersToAdd };
    this.response = {
      upstream: upstreamHeaderMatcher(service.allowedUpstreamHeaders),
      upstreamToAppend: upstreamHeaderMatcher(service.allowedUpstreamHeadersToAppend),
      client: clientHeaderMatcher(service.allowedClientHeaders),
    };
  }

  check(check: Check, done: (response: AuthzResponse) => void): AsyncRequest | null {
    const cluster = this.clusters.get(this.service.cluster);
    if (cluster === undefined) {
      done(AUTHZ_ERROR);
      return null;
    }
    const { head, body } = httpCheckRequest(check, this.request);
    const matchers = this.response;
    return this.client.send(
      cluster,
      head,
      body.length === 0 ? [] : [body],
      null,
      { onSuccess: (response) => done(httpAuthzResponse(response.head, response.body, matchers)), onFailure: () => done(AUTHZ_ERROR) },
      { timeoutMs: this.service.timeoutMs, keepResponseBody: true },
    );
  }
}

/** The message types a gRPC check is made of. */
export interface CheckMessageTypes {
  readonly request: protobuf.Type;
  readonly response: protobuf.Type;
  /** type.v3.StatusCode's numbers by name. */
  readonly statusCodes: Readonly<Record<string, number>>;
}

export class GrpcAuthzClient implements AuthzClient {
  private readonly client: GrpcUnaryClient;
  private readonly method: string;

  constructor(
    service: ExtAuthzGrpcService,
    clusters: ClusterManager,
    client: AsyncClient,
    private readonly types: CheckMessageTypes,
  ) {
    this.client = new GrpcUnaryClient(clusters, client, { clusterName: service.clusterName, timeoutMs: service.timeoutMs });
    this.method = service.apiVersion === 'V3' ? 'envoy.service.auth.v3.Authorization/Check' : 'envoy.service.auth.v2.Authorization/Check';
  }

  check(check: Check, done: (response: AuthzResponse) => void): AsyncRequest | null {
    const types = this.types;
    let message: Buffer;
    try {
      message = Buffer.from(types.request.encode(protojson.fromJson(types.request, check.request)).finish());
    } catch {
      // What a request carries (its metadata context, say) might not make a message: the check fails, the worker stays.
      done(AUTHZ_ERROR);
      return null;
    }
    return this.client.send(this.method, message, {
      onSuccess: (answer) => {
        let response: CheckResponseJson;
        try {
          response = protojson.toJson(types.response, types.response.decode(answer)) as CheckResponseJson;
        } catch {
          // A message that does not decode is no answer (Envoy's gRPC client fails the call as INTERNAL).
          done(AUTHZ_ERROR);
          return;
        }
        done(grpcAuthzResponse(response, types.statusCodes));
      },
      onFailure: () => done(AUTHZ_ERROR),
    });
  }
}
