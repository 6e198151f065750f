// The load balancer context of a request whose route hashes or matches metadata (the router's
// side of Envoy's LoadBalancerContext). Routes with neither pass the cheap connectionContext.

import type { HashPolicy } from '../../config/model';
import type { RequestHead } from '../../http/message';
import { addressString } from '../../network/socket_address';
import type { LoadBalancerContext } from '../../upstream/worker/lb/load_balancer';
import type { MetadataMatchCriteria } from '../../config/metadata_match';
import type { DownstreamAddresses } from '../../network/downstream_addresses';
import type { TrustedClient } from '../../http/trusted_client';
import { computeHashKey, generatedCookieValue, type HashedRequest, setCookieValue } from './hash_policy';

export class RouteLoadBalancerContext implements LoadBalancerContext, HashedRequest {
  readonly hostSelectionRetryCount = 0;
  /** `set-cookie` headers for the response, [name, value, ...], from cookie policies that made a cookie. */
  readonly setCookieHeaders: string[] = [];
  private hash: bigint | null = null;
  private hashed = false;

  constructor(
    private readonly hashPolicies: readonly HashPolicy[] | undefined,
    readonly metadataMatch: MetadataMatchCriteria | null,
    readonly head: RequestHead,
    readonly downstream: DownstreamAddresses,
    private readonly request: { trustedClient(): TrustedClient },
  ) {}

  /**
   * Computed on first read, once: as in Envoy, only a hashing balancer asks, so a cookie policy
   * makes no cookie for a cluster that does not hash.
   */
  get hashKey(): bigint | null {
    if (!this.hashed) {
      this.hashed = true;
      if (this.hashPolicies !== undefined) this.hash = computeHashKey(this.hashPolicies, this);
    }
    return this.hash;
  }

  get downstreamHeaders(): RequestHead {
    return this.head;
  }

  get remoteIp(): string {
    return this.request.trustedClient().ip;
  }

  addCookie(name: string, path: string, ttlSeconds: number): string {
    const downstream = this.downstream;
    const value = generatedCookieValue(
      addressString({ address: downstream.remoteAddress ?? '', port: downstream.remotePort ?? 0 }),
      addressString({ address: downstream.localAddress ?? '', port: downstream.localPort ?? 0 }),
    );
    this.setCookieHeaders.push('set-cookie', setCookieValue(name, value, path, ttlSeconds));
    return value;
  }

  shouldSelectAnotherHost(): boolean {
    return false;
  }
}
