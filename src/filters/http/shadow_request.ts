// A mirrored request (Envoy 1.16's ShadowWriter): once the downstream request is complete, a
// copy of it goes to the mirror cluster through the async client, `-shadow` appended to its
// host. Fire and forget: nothing waits for it and its response is read and dropped, but it
// counts in the mirror cluster's statistics and outlier detection as any request does.

import { RequestHead } from '../../http/message';
import type { DownstreamAddresses } from '../../network/downstream_addresses';
import type { AsyncClient, AsyncRequestCallbacks } from '../../upstream/worker/async_client';
import type { Cluster } from '../../upstream/worker/cluster';

/** A mirror's answer goes nowhere. */
const IGNORED: AsyncRequestCallbacks = { onSuccess: () => undefined, onFailure: () => undefined };

/** `host:port` -> `host-shadow:port`; `host` -> `host-shadow`. */
export function shadowAuthority(authority: string): string {
  const colon = authority.indexOf(':');
  // Envoy splits at ':' and keeps two parts at most: an IPv6 literal gets the suffix at its end.
  if (colon < 0 || authority.indexOf(':', colon + 1) >= 0) return `${authority}-shadow`;
  return `${authority.slice(0, colon)}-shadow${authority.slice(colon)}`;
}

/** The mirror's copy of the request head as the router sent it upstream. */
export function shadowHead(sent: RequestHead): RequestHead {
  const head = new RequestHead(sent.method, sent.path, false);
  head.authority = shadowAuthority(sent.authority);
  head.scheme = sent.scheme;
  head.bodyLength = sent.bodyLength;
  head.contentLength = sent.contentLength;
  head.headers.push(...sent.headers);
  return head;
}

/**
 * Sends a copy of a complete request to `cluster`; returns at once.
 * @param timeoutMs the route's timeout, after which the mirror's response is given up; 0: never
 */
export function sendShadow(
  client: AsyncClient,
  cluster: Cluster,
  head: RequestHead,
  body: readonly Buffer[],
  trailers: readonly string[] | null,
  downstream: DownstreamAddresses,
  timeoutMs: number,
): void {
  client.send(cluster, head, body, trailers, IGNORED, { timeoutMs, keepResponseBody: false, downstream });
}
