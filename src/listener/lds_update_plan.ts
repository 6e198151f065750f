// What one LDS update changes (Envoy's ListenerManagerImpl::addOrUpdateListener and
// LdsApiImpl's removals), decided apart from sockets and workers: which listeners are added,
// modified (on the address they have: the socket stays), removed, or left as they are, and which
// are refused, with Envoy's reasons. Pure.

import type { SocketAddress } from '../config/model';
import type { JsonObject } from '../config/json';
import { addressString } from '../network/socket_address';

/** A listener of the update that passed the static checks. */
export interface ListenerCandidate {
  readonly name: string;
  /** The resource, canonicalized: an update with the same content changes nothing. */
  readonly content: string;
  readonly address: SocketAddress;
  readonly reusePort: boolean;
}

/** A listener LDS brought that serves now. */
export interface CurrentListener {
  readonly name: string;
  readonly content: string;
  readonly address: SocketAddress;
  readonly reusePort: boolean;
}

/** A listener of the update refused, and why. */
export interface ListenerRefusal {
  readonly name: string;
  readonly reason: string;
}

export interface ListenerUpdatePlan<C extends ListenerCandidate> {
  readonly added: C[];
  /** Same name and address (Envoy's rule for a change): the listen socket stays, new filter chains take it. */
  readonly modified: C[];
  readonly removed: string[];
  readonly errors: ListenerRefusal[];
}

/** Port 0 asks for a fresh port each time: such listeners never share an address. */
function addressKey(address: SocketAddress): string | null {
  return address.port === 0 ? null : addressString(address);
}

/**
 * @param namesInUpdate every name the update holds, refused ones too: a listener that is absent is removed
 * @param candidates the update's listeners that passed the static checks, in order
 */
export function planListenerUpdate<C extends ListenerCandidate>(
  staticListeners: readonly { readonly name: string; readonly address: SocketAddress }[],
  current: ReadonlyMap<string, CurrentListener>,
  namesInUpdate: ReadonlySet<string>,
  candidates: readonly C[],
): ListenerUpdatePlan<C> {
  const plan: ListenerUpdatePlan<C> = { added: [], modified: [], removed: [], errors: [] };
  for (const name of current.keys()) if (!namesInUpdate.has(name)) plan.removed.push(name);
  // Who holds each address once the update applies: the static listeners, the dynamic ones the
  // update keeps without touching them (refused ones keep serving), then each accepted one in turn.
  const holders = new Map<string, string>();
  const hold = (name: string, address: SocketAddress) => {
    const key = addressKey(address);
    if (key !== null && !holders.has(key)) holders.set(key, name);
  };
  for (const l of staticListeners) hold(l.name, l.address);
  const candidateNames = new Set(candidates.map((c) => c.name));
  for (const l of current.values()) if (namesInUpdate.has(l.name) && !candidateNames.has(l.name)) hold(l.name, l.address);
  const staticNames = new Set(staticListeners.map((l) => l.name));
  for (const candidate of candidates) {
    const { name, address } = candidate;
    if (staticNames.has(name)) {
      plan.errors.push({ name, reason: `cannot add or update listener '${name}': a static listener has that name` });
      continue;
    }
    const serving = current.get(name);
    if (serving !== undefined && addressString(serving.address) !== addressString(address)) {
      plan.errors.push({ name, reason: `error updating listener: '${name}' has a different address '${addressString(address)}' from existing listener` });
      continue;
    }
    // A change keeps the sockets, which are bound one way or the other.
    if (serving !== undefined && serving.reusePort !== candidate.reusePort) {
      plan.errors.push({ name, reason: `error updating listener: '${name}' has a different reuse_port (${candidate.reusePort}) from existing listener; remove it, then add it` });
      continue;
    }
    const key = addressKey(address);
    const holder = key === null ? undefined : holders.get(key);
    if (holder !== undefined && holder !== name) {
      plan.errors.push({ name, reason: `error adding listener: '${name}' has duplicate address '${addressString(address)}' as existing listener '${holder}'` });
      continue;
    }
    hold(name, address);
    if (serving === undefined) plan.added.push(candidate);
    else if (serving.content !== candidate.content) plan.modified.push(candidate);
  }
  return plan;
}

/** An old filter chain kept as the new chain at `next`. */
export interface KeptChain {
  readonly previous: number;
  readonly next: number;
}

/**
 * Envoy 1.16's in-place filter chain update: when a change touches `filter_chains` alone, the
 * old chains found unchanged among the new ones are kept, with their connections; every other
 * old chain drains. Any other change drains them all.
 * @param previous, next the listener resources (canonical v3 JSON) before and after
 */
export function keptFilterChains(previous: JsonObject, next: JsonObject): KeptChain[] {
  const { filter_chains: before, ...restBefore } = previous;
  const { filter_chains: after, ...restAfter } = next;
  if (JSON.stringify(restBefore) !== JSON.stringify(restAfter)) return [];
  const chains = (value: unknown) => (Array.isArray(value) ? value.map((chain) => JSON.stringify(chain)) : []);
  const nextChains = chains(after);
  return chains(before).flatMap((chain, i) => {
    const j = nextChains.indexOf(chain);
    return j === -1 ? [] : [{ previous: i, next: j }];
  });
}
