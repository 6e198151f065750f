// The descriptors a request makes for the rate limit filter, from its route's and virtual host's
// rate_limits, as Envoy 1.16's RateLimitPolicyEntryImpl and the filter's populateRateLimitDescriptors
// make them: each policy of the filter's stage gives one descriptor when every action gives its
// entry. Pure: compiled once per route configuration, then read per request.

import { isIP } from 'node:net';
import type { RateLimitAction, RateLimitPolicy, RateLimitPerRouteConfig } from '../../config/model';
import type { RequestHead } from '../../http/message';
import { HeaderMatcher, headerValue, matchAll } from './header_matcher';

export interface DescriptorEntry {
  readonly key: string;
  readonly value: string;
}

export type Descriptor = readonly DescriptorEntry[];

/** What the actions read of a request besides its head. */
export interface DescriptorInputs {
  readonly head: RequestHead;
  /** The proxy's own service cluster (--service-cluster): source_cluster's value. */
  readonly serviceCluster: string;
  /** The cluster the route sends the request to: destination_cluster's value. */
  readonly routeCluster: string;
  /** The trusted client's address: remote_address's value. */
  readonly remoteAddress: string;
}

type CompiledAction = (inputs: DescriptorInputs, entries: DescriptorEntry[]) => boolean;

/** One rate_limits entry, ready for requests. */
export class RateLimitPolicyEntry {
  readonly stage: number;
  /** `ratelimit.<disable_key>.http_filter_enabled`, the runtime key that turns the entry off; null without a disable_key. */
  readonly disableRuntimeKey: string | null;
  private readonly actions: readonly CompiledAction[];

  constructor(policy: RateLimitPolicy) {
    this.stage = policy.stage;
    this.disableRuntimeKey = policy.disableKey === '' ? null : `ratelimit.${policy.disableKey}.http_filter_enabled`;
    this.actions = policy.actions.map(compileAction);
  }

  /** The request's descriptor; null when an action gives no entry (and none of the others counts). */
  descriptor(inputs: DescriptorInputs): Descriptor | null {
    const entries: DescriptorEntry[] = [];
    for (const action of this.actions) if (!action(inputs, entries)) return null;
    return entries;
  }
}

function compileAction(action: RateLimitAction): CompiledAction {
  switch (action.kind) {
    case 'source_cluster':
      return (inputs, entries) => push(entries, 'source_cluster', inputs.serviceCluster);
    case 'destination_cluster':
      return (inputs, entries) => push(entries, 'destination_cluster', inputs.routeCluster);
    case 'request_headers': {
      const { headerName, descriptorKey, skipIfAbsent } = action;
      return (inputs, entries) => {
        const value = headerValue(inputs.head, headerName);
        // Absent: the descriptor goes without this entry when skip_if_absent says so, else not at all.
        return value === undefined ? skipIfAbsent : push(entries, descriptorKey, value);
      };
    }
    case 'remote_address':
      // A client that is no IP address (a Unix socket's) makes no descriptor.
      return (inputs, entries) => isIP(inputs.remoteAddress) !== 0 && push(entries, 'remote_address', inputs.remoteAddress);
    case 'generic_key': {
      const { descriptorKey, descriptorValue } = action;
      return (_inputs, entries) => push(entries, descriptorKey, descriptorValue);
    }
    case 'header_value_match': {
      const { descriptorValue, expectMatch } = action;
      const matchers = action.headers.map((match) => new HeaderMatcher(match));
      return (inputs, entries) => matchAll(matchers, inputs.head) === expectMatch && push(entries, 'header_match', descriptorValue);
    }
  }
}

function push(entries: DescriptorEntry[], key: string, value: string): true {
  entries.push({ key, value });
  return true;
}

/** A route's or virtual host's rate_limits, ready for requests. */
export class RateLimitPolicySet {
  readonly entries: readonly RateLimitPolicyEntry[];

  constructor(policies: readonly RateLimitPolicy[]) {
    this.entries = policies.map((policy) => new RateLimitPolicyEntry(policy));
  }

  /** The descriptors of its entries of `stage` the runtime leaves on, appended to `out`. */
  collect(stage: number, inputs: DescriptorInputs, enabled: (runtimeKey: string) => boolean, out: Descriptor[]): void {
    for (const entry of this.entries) {
      if (entry.stage !== stage || (entry.disableRuntimeKey !== null && !enabled(entry.disableRuntimeKey))) continue;
      const descriptor = entry.descriptor(inputs);
      if (descriptor !== null) out.push(descriptor);
    }
  }
}

/** How a route's descriptors and its virtual host's combine: Envoy's VhRateLimitOptions. */
export type VhRateLimits = RateLimitPerRouteConfig['vhRateLimits'];

/**
 * include_vh_rate_limits on the route says INCLUDE; else the most specific RateLimitPerRoute's
 * vh_rate_limits; else OVERRIDE (the virtual host's count only for a route without rate_limits).
 */
export function vhRateLimitsOption(includeVhRateLimits: boolean, perRoute: RateLimitPerRouteConfig | undefined): VhRateLimits {
  if (includeVhRateLimits) return 'INCLUDE';
  return perRoute?.vhRateLimits ?? 'OVERRIDE';
}

/** Whether the virtual host's rate_limits count for a route: `routeHasRateLimits` of any stage. */
export function countsVirtualHost(option: VhRateLimits, routeHasRateLimits: boolean): boolean {
  return option === 'INCLUDE' || (option === 'OVERRIDE' && !routeHasRateLimits);
}
