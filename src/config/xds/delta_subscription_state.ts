// What a delta xDS client holds for one resource type (Envoy's DeltaSubscriptionState): the
// names it wants (or every resource: a wildcard type, as CDS is), the resources it has with
// their versions, and the interest changes still to tell the server. A response's additions and
// removals make a new set, which becomes the held one only once the subscribers accepted it: a
// rejected response leaves the set as it was. Pure: no I/O, no timers.

import { FieldError } from '../errors';
import { indexPath } from '../field_path';
import type { DeltaResourceEntry } from './delta_discovery_wire';
import type { DecodedResource } from './subscription';

/** The interest part of a DeltaDiscoveryRequest. */
export interface DeltaRequestInterest {
  readonly resourceNamesSubscribe: readonly string[];
  readonly resourceNamesUnsubscribe: readonly string[];
  readonly initialResourceVersions: ReadonlyMap<string, string>;
}

/** A response applied to the held set, not yet accepted. */
export interface DeltaUpdate {
  readonly resources: ReadonlyMap<string, DecodedResource>;
  /** The names the response added, changed or removed. */
  readonly touched: ReadonlySet<string>;
}

export class DeltaSubscriptionState {
  private wildcard = false;
  private readonly wanted = new Set<string>();
  private held = new Map<string, DecodedResource>();
  /** Interest changes since the last request. */
  private readonly namesAdded = new Set<string>();
  private readonly namesRemoved = new Set<string>();
  private firstRequestOfStream = true;

  /**
   * What the watches of the type want now: every resource when any of them is a wildcard watch,
   * else the union of their names. A resource no longer wanted is dropped.
   */
  setInterest(wildcard: boolean, names: ReadonlySet<string>): void {
    this.wildcard = wildcard;
    for (const name of names) {
      if (this.wanted.has(name)) continue;
      this.wanted.add(name);
      // Removed then added before a request went: the server must hear it as new.
      this.namesRemoved.delete(name);
      this.namesAdded.add(name);
    }
    for (const name of [...this.wanted]) {
      if (names.has(name)) continue;
      this.wanted.delete(name);
      this.namesAdded.delete(name);
      this.namesRemoved.add(name);
    }
    for (const name of [...this.held.keys()]) {
      if (!this.wants(name)) this.held.delete(name);
    }
  }

  /** A new stream: its first request states the whole interest and what is held. */
  streamOpened(): void {
    this.firstRequestOfStream = true;
  }

  /** Whether the server has something to learn: a first request, or a change of interest. */
  requestPending(): boolean {
    return this.firstRequestOfStream || (!this.wildcard && (this.namesAdded.size > 0 || this.namesRemoved.size > 0));
  }

  /** The interest of the next request, as Envoy words it; the changes count as told. */
  nextRequest(): DeltaRequestInterest {
    let subscribe: string[];
    let unsubscribe: string[] = [];
    const initial = new Map<string, string>();
    if (this.firstRequestOfStream) {
      this.firstRequestOfStream = false;
      for (const [name, resource] of this.held) initial.set(name, resource.version ?? '');
      // A wildcard subscription is an empty first subscribe; a named one lists every name,
      // those not received yet included.
      subscribe = this.wildcard ? [] : [...this.wanted];
    } else {
      subscribe = this.wildcard ? [] : [...this.namesAdded];
      unsubscribe = this.wildcard ? [] : [...this.namesRemoved];
    }
    this.namesAdded.clear();
    this.namesRemoved.clear();
    return { resourceNamesSubscribe: subscribe, resourceNamesUnsubscribe: unsubscribe, initialResourceVersions: initial };
  }

  /**
   * The held set with a response applied: `removed` taken out, `added` (their wrappers, and
   * their contents decoded in the same order) put in; resources not wanted are left out.
   * @throws FieldError for a name twice in the response, or a wrapper naming another resource than it carries
   */
  apply(entries: readonly DeltaResourceEntry[], decoded: readonly DecodedResource[], removed: readonly string[]): DeltaUpdate {
    const touched = new Set<string>();
    entries.forEach((entry, i) => {
      const path = `${indexPath('resources', i)}.name`;
      if (touched.has(entry.name)) throw new FieldError(path, `duplicate name ${entry.name} found among added/updated resources`);
      touched.add(entry.name);
      const name = decoded[i]!.name;
      if (name !== entry.name) throw new FieldError(path, `'${entry.name}' is not the name of the resource it carries ('${name}')`);
    });
    removed.forEach((name, i) => {
      if (touched.has(name)) throw new FieldError(indexPath('removed_resources', i), `duplicate name ${name} found in the union of added+removed resources`);
      touched.add(name);
    });
    const resources = new Map(this.held);
    for (const name of removed) resources.delete(name);
    entries.forEach((entry, i) => {
      if (this.wants(entry.name)) resources.set(entry.name, { ...decoded[i]!, version: entry.version, path: entry.path });
    });
    return { resources, touched };
  }

  /** The update was accepted: it is what is held now (less what stopped being wanted meanwhile). */
  commit(update: DeltaUpdate): void {
    this.held = new Map([...update.resources].filter(([name]) => this.wants(name)));
  }

  private wants(name: string): boolean {
    return this.wildcard || this.wanted.has(name);
  }
}

/**
 * What a watch is handed of an update: every resource for a wildcard watch, those it names for
 * another; null when the update touches nothing it wants (an empty response still goes to a
 * wildcard watch, as Envoy's WatchMap does).
 */
export function watchResources(update: DeltaUpdate, names: readonly string[]): DecodedResource[] | null {
  if (names.length === 0) return [...update.resources.values()];
  if (!names.some((name) => update.touched.has(name))) return null;
  return names.flatMap((name) => update.resources.get(name) ?? []);
}
