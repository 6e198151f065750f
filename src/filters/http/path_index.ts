// A run of routes that test the path alone (a case-sensitive prefix or path, nothing else), as
// one lookup: the request path is walked once through a trie of the prefixes, the exact paths
// are looked up, and the earliest route of the run among those that match wins, as a scan in
// order would find it. A table of a thousand prefix routes then costs a walk along the path,
// not a thousand tests. Pure: built once per route table.

import type { RouteMatch } from '../../config/model';
import { pathEnd } from './route_match';

interface TrieNode {
  /** By the next character's UTF-16 code unit. */
  readonly children: Map<number, TrieNode>;
  /** The earliest entry whose prefix ends here; -1 when none does. */
  first: number;
}

/** Whether `match` tests the path alone, case-sensitively: what a PathIndex answers. */
export function isPlainPathMatch(match: RouteMatch): boolean {
  return (
    (match.prefix !== undefined || match.path !== undefined) &&
    match.safeRegex === undefined &&
    match.caseSensitive &&
    match.headers.length === 0 &&
    match.queryParameters.length === 0 &&
    !match.grpc &&
    match.tlsContext === undefined &&
    match.runtimeFraction === undefined
  );
}

export class PathIndex<T> {
  private readonly root: TrieNode = { children: new Map(), first: -1 };
  /** Exact paths (before the query), each with its earliest entry. */
  private readonly paths = new Map<string, number>();

  /** @param matches each entry's match, every one a plain path match (isPlainPathMatch) */
  constructor(
    private readonly entries: readonly T[],
    matches: readonly RouteMatch[],
  ) {
    matches.forEach((match, index) => {
      if (match.prefix !== undefined) this.addPrefix(match.prefix, index);
      else if (!this.paths.has(match.path!)) this.paths.set(match.path!, index);
    });
  }

  /** The earliest entry whose match accepts `path` (a request's :path); undefined when none does. */
  first(path: string): T | undefined {
    let best = -1;
    if (this.paths.size > 0) {
      const end = pathEnd(path, false);
      best = this.paths.get(end === path.length ? path : path.slice(0, end)) ?? -1;
    }
    // A prefix match reads the whole :path, query included, as Envoy's does.
    let node = this.root;
    for (let i = 0; ; i++) {
      if (node.first >= 0 && (best < 0 || node.first < best)) best = node.first;
      if (i === path.length) break;
      const next = node.children.get(path.charCodeAt(i));
      if (next === undefined) break;
      node = next;
    }
    return best < 0 ? undefined : this.entries[best];
  }

  private addPrefix(prefix: string, index: number): void {
    let node = this.root;
    for (let i = 0; i < prefix.length; i++) {
      const code = prefix.charCodeAt(i);
      let next = node.children.get(code);
      if (next === undefined) {
        next = { children: new Map(), first: -1 };
        node.children.set(code, next);
      }
      node = next;
    }
    if (node.first < 0) node.first = index;
  }
}
