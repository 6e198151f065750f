// Which header mutations a route's request and response go through, and in what order (Envoy
// 1.16's finalizeRequestHeaders and finalizeResponseHeaders): built once per route when the route
// table is.

import type { HeaderMutations } from '../../config/model';
import { HeaderMutator } from './header_mutator';

/** The header mutations of a route's request and of its response, each list in the order it applies. */
export interface HeaderMutationChains {
  readonly request: readonly HeaderMutator[];
  readonly response: readonly HeaderMutator[];
}

export const NO_MUTATIONS: HeaderMutationChains = { request: [], response: [] };

/** One level's mutators; absent where the level has none. */
export interface LevelMutators {
  readonly request?: HeaderMutator;
  readonly response?: HeaderMutator;
}

export function levelMutators(level: { readonly requestHeaders?: HeaderMutations; readonly responseHeaders?: HeaderMutations }): LevelMutators {
  return {
    ...(level.requestHeaders !== undefined ? { request: new HeaderMutator(level.requestHeaders) } : {}),
    ...(level.responseHeaders !== undefined ? { response: new HeaderMutator(level.responseHeaders) } : {}),
  };
}

/** Levels most specific first; Envoy applies them so unless the most specific is to win. */
export function chains(levels: readonly LevelMutators[], mostSpecificWins: boolean): HeaderMutationChains {
  const ordered = mostSpecificWins ? [...levels].reverse() : levels;
  const request = ordered.flatMap((level) => (level.request === undefined ? [] : [level.request]));
  const response = ordered.flatMap((level) => (level.response === undefined ? [] : [level.response]));
  return request.length === 0 && response.length === 0 ? NO_MUTATIONS : { request, response };
}
