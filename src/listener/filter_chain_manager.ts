// A listener's filter chains as a worker runs them (Envoy's FilterChainManager): each chain's
// transport socket and terminal network filter, the selector that picks one per connection,
// and the listener filters that find what the selector compares.

import type { TlsContext } from '../tls/tls_context';
import type { DownstreamTlsSocketFactory } from '../tls/downstream_tls_socket';
import type { ConnectionFacts, FilterChainSelector } from './filter_chain_selector';
import type { NetworkFilterFactory } from './network_filter';
import type { TlsInspector } from './tls_inspector';

export interface FilterChain {
  readonly filter: NetworkFilterFactory;
  /** null: plaintext. */
  readonly tls: DownstreamTlsSocketFactory | null;
}

export interface ListenerFilters {
  /** The original_dst filter: each connection's local address becomes its original destination. */
  readonly originalDst: boolean;
  /** null: the listener has no TLS inspector, and every connection is raw_buffer without SNI. */
  readonly tlsInspector: TlsInspector | null;
  /** listener_filters_timeout; 0 disables. */
  readonly timeoutMs: number;
  readonly continueOnTimeout: boolean;
}

export class FilterChainManager {
  constructor(
    private readonly chains: readonly FilterChain[],
    private readonly selector: FilterChainSelector,
    readonly listenerFilters: ListenerFilters,
  ) {}

  /**
   * These chains, but for each kept one: the old manager's chain object in its new place, so the
   * connections it carries stay on it (an in-place filter chain update).
   */
  keeping(old: FilterChainManager, kept: readonly { readonly previous: number; readonly next: number }[]): FilterChainManager {
    const chains = [...this.chains];
    for (const { previous, next } of kept) chains[next] = old.chains[previous]!;
    return new FilterChainManager(chains, this.selector, this.listenerFilters);
  }

  /** ConnectionFacts.destinationPort is read. */
  get matchesDestinationPort(): boolean {
    return this.selector.matchesDestinationPort;
  }

  /** The chain for a connection, or null (Envoy counts no_filter_chain_match and closes it). */
  select(facts: ConnectionFacts): FilterChain | null {
    const index = this.selector.select(facts);
    return index === null ? null : this.chains[index];
  }

  /** The drain time is over: each chain's filter closes its connections that carry nothing. */
  closeIdleConnections(): void {
    for (const chain of this.chains) chain.filter.closeIdleConnections();
  }

  /** The same for the chain at `index` alone (its drain ended; the others carry on). */
  closeIdleConnectionsOf(index: number): void {
    this.chains[index]?.filter.closeIdleConnections();
  }

  /** The TLS contexts of the chains, to reload when their files change. */
  get tlsContexts(): TlsContext[] {
    return this.chains.flatMap((chain) => (chain.tls === null ? [] : [chain.tls.context]));
  }
}
