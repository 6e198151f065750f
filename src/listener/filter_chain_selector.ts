// Envoy's filter chain matching: a connection's destination port, SNI, transport protocol and
// ALPN protocols pick one of a listener's filter chains. Each criterion narrows in turn, the
// most specific entry winning at each step (an exact port over any port; an exact server name,
// then the longest `*.suffix`, then chains without server names), with no backtracking: a
// connection that fails a later step matches nothing. Pure.

import { FieldError } from '../config/errors';
import type { FilterChainMatch } from '../config/model';

/** What the listener and its listener filters know about a connection. */
export interface ConnectionFacts {
  /** Read only when some chain matches on it (matchesDestinationPort): 0 otherwise. */
  readonly destinationPort: number;
  /** Lower case; '' without SNI. */
  readonly serverName: string;
  /** 'tls' when the TLS inspector found a ClientHello, else 'raw_buffer'. */
  readonly transportProtocol: string;
  readonly applicationProtocols: readonly string[];
}

/** '' stands for "any" at every level. */
type Level<T> = Map<string, T>;
type Tree = Level<Level<Level<Level<number>>>>;

const ANY = '';

export class FilterChainSelector {
  private readonly tree: Tree = new Map();
  /** Some chain names a destination_port: a connection's local port must be looked up (a getsockname each). */
  readonly matchesDestinationPort: boolean;

  /**
   * @param listenerAddress for Envoy's error messages, e.g. 127.0.0.1:10000
   * @throws FieldError at `filter_chains[i]...` for a partial wildcard or a chain matching what another matches
   */
  constructor(matches: readonly FilterChainMatch[], listenerAddress: string) {
    matches.forEach((match, i) => {
      match.serverNames.forEach((name, j) => {
        if (name.includes('*') && !isWildcard(name)) {
          throw new FieldError(
            `filter_chains[${i}].filter_chain_match.server_names[${j}]`,
            `error adding listener '${listenerAddress}': partial wildcards are not supported in "server_names"`,
          );
        }
      });
      const ports = [match.destinationPort === null ? ANY : String(match.destinationPort)];
      const names = match.serverNames.length === 0 ? [ANY] : match.serverNames;
      const transports = [match.transportProtocol];
      const protocols = match.applicationProtocols.length === 0 ? [ANY] : match.applicationProtocols;
      for (const port of ports) {
        for (const name of names) {
          for (const transport of transports) {
            for (const protocol of protocols) {
              const leaf = child(child(child(this.tree, port), name), transport);
              if (leaf.has(protocol)) {
                throw new FieldError(`filter_chains[${i}]`, `error adding listener '${listenerAddress}': multiple filter chains with the same matching rules are defined`);
              }
              leaf.set(protocol, i);
            }
          }
        }
      }
    });
    this.matchesDestinationPort = this.tree.size > 1 || !this.tree.has(ANY);
  }

  /** The index of the chain for the connection, or null when none matches. */
  select(facts: ConnectionFacts): number | null {
    const byName = (this.matchesDestinationPort ? this.tree.get(String(facts.destinationPort)) : undefined) ?? this.tree.get(ANY);
    const byTransport = byName === undefined ? undefined : serverNameEntry(byName, facts.serverName);
    const byProtocol = byTransport === undefined ? undefined : (byTransport.get(facts.transportProtocol) ?? byTransport.get(ANY));
    if (byProtocol === undefined) return null;
    for (const protocol of facts.applicationProtocols) {
      const chain = byProtocol.get(protocol);
      if (chain !== undefined) return chain;
    }
    return byProtocol.get(ANY) ?? null;
  }
}

function child<T>(level: Level<Level<T>>, key: string): Level<T> {
  let next = level.get(key);
  if (next === undefined) level.set(key, (next = new Map()));
  return next;
}

function isWildcard(name: string): boolean {
  return name.startsWith('*.') && !name.slice(1).includes('*');
}

/** The exact name, then `*.` wildcards from the longest suffix to the shortest, then "any". */
function serverNameEntry<T>(level: Level<T>, serverName: string): T | undefined {
  if (serverName !== '') {
    const exact = level.get(serverName);
    if (exact !== undefined) return exact;
    for (let dot = serverName.indexOf('.'); dot >= 0; dot = serverName.indexOf('.', dot + 1)) {
      const wildcard = level.get(`*${serverName.slice(dot)}`);
      if (wildcard !== undefined) return wildcard;
    }
  }
  return level.get(ANY);
}
