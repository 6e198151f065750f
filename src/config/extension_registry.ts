// The extensions this build implements, by category (their descriptors: extension.ts), and
// what is asked of them as a whole: Envoy's lookup of a configured extension (by name, else by
// the type of its typed_config), the list GET /server_info shows (node.extensions), and
// --disable-extensions resolved against them. Built once at the top (src/extensions) and handed
// to whatever reads it.

import { type AnyFactories, type ExtensionCategory, type ExtensionDescriptor, type ExtensionModels, UNLISTED_CATEGORIES } from './extension';
import { JsonObject, messageField, stringField } from './json';
import { envoyTypeName, proxySpelling, typeNameOfUrl, typeUrl } from './names';
import type { Shape } from './shape';

const DISCOVERY_TYPE_PREFIX = 'proxy.cluster.';

export interface ExtensionInfo {
  readonly name: string;
  readonly category: string;
  /** The message type of its typed_config; '' when it takes none. */
  readonly typeDescriptor: string;
}

/** Every category's descriptors, each list in any order. */
export type ExtensionLists<F extends AnyFactories> = { readonly [C in ExtensionCategory]: readonly ExtensionDescriptor<C, F[C]>[] };

type AnyDescriptor = ExtensionDescriptor<ExtensionCategory>;

export class ExtensionRegistry<F extends AnyFactories> {
  /** Legacy names (`envoy.tcp_proxy`) -> our names. */
  private readonly aliases: ReadonlyMap<string, string>;
  /**
   * typed_config and typed_per_filter_config type URLs (v3, Envoy's package) -> the shapes of
   * those configs. A filter whose per-route config is its typed_config's type gives both one shape.
   */
  private readonly shapes: ReadonlyMap<string, Shape>;

  constructor(private readonly lists: ExtensionLists<F>) {
    const all: AnyDescriptor[] = Object.values<readonly AnyDescriptor[]>(lists).flat();
    this.aliases = new Map(all.flatMap((e) => (e.aliases ?? []).map((alias): [string, string] => [alias, e.name])));
    const typed = all.flatMap((e): Array<[string, Shape]> => (e.configType === null ? [] : [[typeUrl(e.configType), e.shape]]));
    const perRoute = lists['proxy.filters.http'].flatMap((e): Array<[string, Shape]> => (e.perRoute === undefined ? [] : [[typeUrl(e.perRoute.configType), e.perRoute.shape]]));
    this.shapes = new Map([...typed, ...perRoute]);
  }

  /** The descriptors of a category. */
  of<C extends ExtensionCategory>(category: C): readonly ExtensionDescriptor<C, F[C]>[] {
    return this.lists[category];
  }

  /** The extension of a category by its name in our spelling. */
  get<C extends ExtensionCategory>(category: C, name: string): ExtensionDescriptor<C, F[C]> | undefined {
    return this.of(category).find((e) => e.name === name);
  }

  /**
   * The extension configured as `extension` in `category`, found as Envoy 1.16 finds its
   * factory: by name (ours, Envoy's, or a legacy alias), else by the type of its typed_config,
   * so that `name: tcp` with a TcpProxy typed_config is the TCP proxy.
   * @param extension with a v3 typed_config type URL (decoded, or after the v2 upgrade renamed it)
   */
  find<C extends ExtensionCategory>(category: C, extension: JsonObject): ExtensionDescriptor<C, F[C]> | undefined {
    const byName = this.get(category, this.canonicalName(stringField(extension, 'name')));
    if (byName !== undefined) return byName;
    const url = stringField(messageField(extension, 'typed_config') ?? {}, '@type');
    if (url === '') return undefined;
    const type = envoyTypeName(typeNameOfUrl(url));
    return this.of(category).find((e) => e.configType === type);
  }

  /**
   * The model of an extension validation admitted, its name canonicalized.
   * @throws Error for an extension that is not registered: validation refuses those first
   */
  model<C extends ExtensionCategory>(category: C, extension: JsonObject): ExtensionModels[C] {
    const descriptor = this.find(category, extension);
    if (descriptor === undefined) throw new Error(`no ${category} extension is named '${stringField(extension, 'name')}': validation admits registered ones only`);
    return descriptor.model(messageField(extension, 'typed_config') ?? {}, { extensions: this });
  }

  /** The name `extension` has in our registry (find); one found by neither keeps its name in our spelling, for validation to refuse. */
  registeredName(category: ExtensionCategory, extension: JsonObject): string {
    return this.find(category, extension)?.name ?? this.canonicalName(stringField(extension, 'name'));
  }

  /** `envoy.router`, `envoy.filters.http.router` -> `proxy.filters.http.router`; other names in our spelling. */
  canonicalName(name: string): string {
    return this.aliases.get(name) ?? proxySpelling(name);
  }

  /** The shape of a typed_config of this type URL; undefined when no extension takes it. */
  shapeOfType(url: string): Shape | undefined {
    return this.shapes.get(url);
  }

  /** Envoy's factory registry as GET /server_info lists it (node.extensions): sorted by category, then name. */
  listed(): ExtensionInfo[] {
    return this.listedDescriptors()
      .map((e) => ({ name: e.name, category: e.category, typeDescriptor: e.configType ?? '' }))
      .sort((a, b) => a.category.localeCompare(b.category) || a.name.localeCompare(b.name));
  }

  /** Unsorted: every start resolves --disable-extensions, and the first localeCompare builds ICU's collator (5 ms). */
  private listedDescriptors(): AnyDescriptor[] {
    return Object.values<readonly AnyDescriptor[]>(this.lists)
      .flat()
      .filter((e) => !UNLISTED_CATEGORIES.has(e.category));
  }

  /**
   * Resolves --disable-extensions entries, written with `envoy.` or `proxy.` names. An entry
   * without a `/` or naming no extension of this build is reported and otherwise ignored.
   */
  resolveDisabled(entries: readonly string[]): DisabledExtensions {
    const known = new Set(this.listedDescriptors().map((e) => extensionKey(e.category, e.name)));
    const keys = new Set<string>();
    const notes: Array<DisabledExtensions['notes'][number]> = [];
    for (const entry of entries) {
      const slash = entry.indexOf('/');
      if (slash < 0) {
        notes.push({ level: 'warning', text: `failed to disable invalid extension name '${entry}'` });
        continue;
      }
      const key = extensionKey(this.canonicalName(entry.slice(0, slash)), this.canonicalName(entry.slice(slash + 1)));
      if (!known.has(key)) {
        notes.push({ level: 'warning', text: `failed to disable unknown extension '${entry}'` });
        continue;
      }
      keys.add(key);
      notes.push({ level: 'info', text: `disabled extension '${entry}'` });
    }
    return { keys, notes };
  }
}

/** The registry name of a cluster discovery type: STATIC -> proxy.cluster.static. */
export function clusterExtensionName(discoveryType: string): string {
  return `${DISCOVERY_TYPE_PREFIX}${discoveryType.toLowerCase()}`;
}

/** The discovery type (`type`) a cluster extension is registered for: proxy.cluster.static -> STATIC. */
export function discoveryTypeOf(extensionName: string): string {
  return extensionName.slice(DISCOVERY_TYPE_PREFIX.length).toUpperCase();
}

/** `<category>/<name>`, the form of --disable-extensions entries. */
export function extensionKey(category: string, name: string): string {
  return `${category}/${name}`;
}

export interface DisabledExtensions {
  /** Keys (extensionKey) of the extensions configuration may not use. */
  readonly keys: ReadonlySet<string>;
  /** What to log about each entry, as Envoy logs it at start-up. */
  readonly notes: readonly { readonly level: 'info' | 'warning'; readonly text: string }[];
}
