// The `proxy.filters.listener.tls_inspector` listener filter: reads a connection's first bytes,
// without consuming them, until it knows whether they are a TLS ClientHello, and reports the
// SNI and ALPN protocols for filter chain matching. Counts what it finds under
// `tls_inspector.*`, as Envoy does.

import type { Counter, StatsStore } from '../stats/stats';
import { parseClientHello } from './client_hello';

/** What the inspector learned: `null` asks the listener to close the connection. */
export interface InspectedHello {
  readonly transportProtocol: 'tls' | 'raw_buffer';
  readonly serverName: string;
  readonly applicationProtocols: readonly string[];
}

const NOT_TLS: InspectedHello = { transportProtocol: 'raw_buffer', serverName: '', applicationProtocols: [] };

export class TlsInspectorStats {
  readonly connection_closed: Counter;
  readonly client_hello_too_large: Counter;
  readonly read_error: Counter;
  readonly tls_found: Counter;
  readonly tls_not_found: Counter;
  readonly alpn_found: Counter;
  readonly alpn_not_found: Counter;
  readonly sni_found: Counter;
  readonly sni_not_found: Counter;

  constructor(store: StatsStore) {
    const scope = store.scope('tls_inspector');
    this.connection_closed = scope.counter('connection_closed');
    this.client_hello_too_large = scope.counter('client_hello_too_large');
    this.read_error = scope.counter('read_error');
    this.tls_found = scope.counter('tls_found');
    this.tls_not_found = scope.counter('tls_not_found');
    this.alpn_found = scope.counter('alpn_found');
    this.alpn_not_found = scope.counter('alpn_not_found');
    this.sni_found = scope.counter('sni_found');
    this.sni_not_found = scope.counter('sni_not_found');
  }
}

export class TlsInspector {
  constructor(private readonly stats: TlsInspectorStats) {}

  /**
   * @param data every byte of the connection so far
   * @returns undefined while more bytes are needed, else the verdict (null: close the connection)
   */
  inspect(data: Buffer): InspectedHello | null | undefined {
    const result = parseClientHello(data);
    const stats = this.stats;
    switch (result.kind) {
      case 'need_more':
        return undefined;
      case 'too_large':
        stats.client_hello_too_large.inc();
        return null;
      case 'not_tls':
        stats.tls_not_found.inc();
        return NOT_TLS;
      case 'client_hello':
        stats.tls_found.inc();
        (result.serverName === '' ? stats.sni_not_found : stats.sni_found).inc();
        (result.alpn.length === 0 ? stats.alpn_not_found : stats.alpn_found).inc();
        return { transportProtocol: 'tls', serverName: result.serverName, applicationProtocols: result.alpn };
    }
  }

  /** The peer closed, or the socket failed, before the inspector knew. */
  closedEarly(error: boolean): void {
    (error ? this.stats.read_error : this.stats.connection_closed).inc();
  }
}
