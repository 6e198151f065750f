// The system resolver configuration, as c-ares reads it at channel start: `nameserver` lines
// (port 53), the search list (`search`, or `domain`: the last line of the two wins) and the
// `timeout:`, `attempts:` and `ndots:` options.

import * as fs from 'node:fs/promises';
import * as net from 'node:net';

export interface DnsServer {
  readonly address: string;
  readonly port: number;
}

export interface ResolvConf {
  readonly servers: readonly DnsServer[];
  /** `options timeout:N`, in milliseconds; null when absent. */
  readonly timeoutMs: number | null;
  /** `options attempts:N`; null when absent. */
  readonly attempts: number | null;
  /** The domains a relative name is tried in. */
  readonly search: readonly string[];
  /** `options ndots:N` (default 1): a name with at least this many dots is tried as is first. */
  readonly ndots: number;
}

/** resolv(5)'s default. */
const DEFAULT_NDOTS = 1;

export const RESOLV_CONF_PATH = '/etc/resolv.conf';

/** What glibc and c-ares use when the file names no server. */
export const FALLBACK_DNS_SERVER: DnsServer = { address: '127.0.0.1', port: 53 };

/** The address without an IPv6 zone suffix, for validation only (sockets accept the zone). */
function isIpAddress(text: string): boolean {
  return net.isIP(text.replace(/%.*$/, '')) !== 0;
}

function positiveInteger(text: string): number | null {
  return /^\d+$/.test(text) && Number(text) > 0 ? Number(text) : null;
}

function nonNegativeInteger(text: string): number | null {
  return /^\d+$/.test(text) ? Number(text) : null;
}

export function parseResolvConf(text: string): ResolvConf {
  const servers: DnsServer[] = [];
  let timeoutMs: number | null = null;
  let attempts: number | null = null;
  let search: readonly string[] = [];
  let ndots = DEFAULT_NDOTS;
  for (const rawLine of text.split('\n')) {
    const fields = rawLine.replace(/[#;].*$/, '').trim().split(/\s+/);
    if (fields[0] === 'nameserver' && fields[1] !== undefined && isIpAddress(fields[1])) {
      servers.push({ address: fields[1], port: 53 });
    } else if (fields[0] === 'search' || fields[0] === 'domain') {
      // `domain` names one domain; `search` a list. Trailing dots are the root: dropped.
      const domains = fields.slice(1).map((d) => d.replace(/\.$/, '')).filter((d) => d !== '');
      search = fields[0] === 'domain' ? domains.slice(0, 1) : domains;
    } else if (fields[0] === 'options') {
      for (const option of fields.slice(1)) {
        const [key, value = ''] = option.split(':', 2);
        const n = positiveInteger(value);
        if (key === 'timeout' && n !== null) timeoutMs = n * 1000;
        if (key === 'attempts' && n !== null) attempts = n;
        const dots = nonNegativeInteger(value);
        if (key === 'ndots' && dots !== null) ndots = dots;
      }
    }
  }
  return { servers: servers.length > 0 ? servers : [FALLBACK_DNS_SERVER], timeoutMs, attempts, search, ndots };
}

/**
 * The names c-ares's ares_search asks, in order: a name ending in a dot only as is; one with at
 * least `ndots` dots as is, then in each search domain; any other in each domain, then as is.
 */
export function searchNames(name: string, conf: Pick<ResolvConf, 'search' | 'ndots'>): string[] {
  if (name.endsWith('.')) return [name.slice(0, -1)];
  const inDomains = conf.search.map((domain) => `${name}.${domain}`);
  const dots = name.split('.').length - 1;
  return dots >= conf.ndots ? [name, ...inDomains] : [...inDomains, name];
}

/** A missing or unreadable file reads as an empty one, as in c-ares. */
export async function readResolvConf(path: string = RESOLV_CONF_PATH): Promise<ResolvConf> {
  const text = await fs.readFile(path, 'utf8').catch(() => '');
  return parseResolvConf(text);
}
