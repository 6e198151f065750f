// Envoy's canary: a host whose endpoint metadata says `canary: true` in the load balancer's
// namespace, or a response whose upstream says so in x-proxy-upstream-canary. Its responses are
// counted again under `cluster.<name>.canary.`, and /clusters shows the host as one.

import { LB_METADATA_NAMESPACE } from '../../config/metadata_match';
import { firstHeaderValue } from '../../http/message';

/** The response header an upstream marks a canary's response with (Envoy's x-envoy-upstream-canary). */
const UPSTREAM_CANARY = 'x-proxy-upstream-canary';

export function isCanaryHost(metadata: Readonly<Record<string, unknown>>): boolean {
  const lb = metadata[LB_METADATA_NAMESPACE] as Readonly<Record<string, unknown>> | undefined;
  return lb?.canary === true;
}

/** Whether a response (its headers as [name, value, ...]) from `host` counts as a canary's. */
export function isCanaryResponse(host: { readonly canary: boolean }, headers: readonly string[]): boolean {
  return host.canary || firstHeaderValue(headers, UPSTREAM_CANARY) === 'true';
}
