// An absolute http or https URL, as Envoy's Http::Utility::Url reads one (a Location, an Origin,
// a Referer): the scheme, the authority as written and the origin-form rest. Pure.

import { isValidAuthority } from './authority';

export interface AbsoluteUrl {
  readonly https: boolean;
  /** host[:port] as the URL writes it. */
  readonly authority: string;
  /** Origin-form path and query; `/` when the URL has no path. */
  readonly path: string;
}

/** `scheme://authority[path][?query][#fragment]`; the scheme is matched case-insensitively. */
const ABSOLUTE_URL = /^(https?):\/\/([^/?#]*)([^#]*)/i;
/** Only visible ASCII: a URL with spaces, controls or raw non-ASCII bytes is none. */
const NOT_URL_CHARACTER = /[^\x21-\x7e]/;

/**
 * The URL `text` is; null for anything else (a relative reference, another scheme, userinfo, a
 * malformed host). The fragment is dropped: it is never part of a request target.
 */
export function parseAbsoluteUrl(text: string): AbsoluteUrl | null {
  if (NOT_URL_CHARACTER.test(text)) return null;
  const url = ABSOLUTE_URL.exec(text);
  if (url === null || !isValidAuthority(url[2])) return null;
  const rest = url[3];
  return { https: url[1].length === 5, authority: url[2], path: rest.startsWith('/') ? rest : `/${rest}` };
}
