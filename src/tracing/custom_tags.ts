// custom_tags (Envoy's CustomTag): tags every span of a connection manager, or of a route, gets
// from a literal, an environment variable (read once, when the configuration is built, as Envoy
// reads it) or a request header.

import type { CustomTagConfig } from '../config/model';
import { firstHeaderValue } from '../http/message';

export interface CustomTag {
  readonly tag: string;
  /** Its value for a request with these headers ([name, value, ...]; null: none); '' sets no tag. */
  value(requestHeaders: readonly string[] | null): string;
}

/**
 * The tags of `configs`, then of `fallback` for the names it lacks: the first tag of a name wins,
 * as Envoy's map keeps it (a route's tags come before its connection manager's).
 * @param environment where environment tags read their variables (process.env)
 */
export function customTags(configs: readonly CustomTagConfig[], fallback: readonly CustomTag[], environment: NodeJS.ProcessEnv): readonly CustomTag[] {
  const tags = new Map<string, CustomTag>();
  for (const config of configs) if (!tags.has(config.tag)) tags.set(config.tag, customTag(config, environment));
  for (const tag of fallback) if (!tags.has(tag.tag)) tags.set(tag.tag, tag);
  return [...tags.values()];
}

function customTag(config: CustomTagConfig, environment: NodeJS.ProcessEnv): CustomTag {
  const { tag } = config;
  switch (config.kind) {
    case 'literal':
      return { tag, value: () => config.value };
    case 'environment': {
      const value = environment[config.name] ?? config.defaultValue;
      return { tag, value: () => value };
    }
    case 'request_header':
      return { tag, value: (headers) => (headers === null ? undefined : firstHeaderValue(headers, config.name)) ?? config.defaultValue };
  }
}
