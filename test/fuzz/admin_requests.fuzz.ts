// Admin requests against a live proxy's admin: its read-only endpoints and the harmless
// mutations, with random queries (filters as regexes, formats, masks, levels), percent
// encodings, methods and bodies; some mutated in their bytes. The admin answers each and closes
// the connection; it never logs a handler's failure, and the proxy stays healthy.

import type { FuzzInput, FuzzSurface } from './driver';
import { exchange, loopbackConnector, startLiveProxy } from './live_proxy';
import { below, INTERESTING_TEXT, mutateBytes, pick, type Random } from './mutators';

/** Endpoints that change nothing an operator would miss (not /quitquitquit, /healthcheck/fail, /reset_counters, profilers, /drain_listeners). */
const PATHS = [
  '/', '/help', '/stats', '/stats/prometheus', '/stats/recentlookups', '/clusters', '/config_dump', '/listeners', '/server_info', '/ready',
  '/runtime', '/certs', '/memory', '/hot_restart_version', '/init_dump', '/contention', '/logging', '/dashboard.js', '/dashboard.css', '/nope', '//stats', '/stats/', '/STATS',
];
const KEYS = ['filter', 'format', 'usedonly', 'type', 'histogram_buckets', 'resource', 'mask', 'include_eds', 'name_regex', 'level', 'paths', 'fuzz.key', 'text_readouts', 'safe'];
const VALUES = [
  'json', 'prometheus', 'text', 'html', 'cumulative', 'disjoint', 'none', 'debug', 'info', 'trace', 'dynamic_active_clusters', 'static_clusters', 'name,version',
  '.*', '(a+)+$', '[', '(?<x>a)', '\\p{L}', 'a{1000000}', '(?=a)', '^server\\.', 'http.*rq_', '*', '%', '%2', '%zz', '%25', '%00', '%ff%fe', 'a%20b', '',
];

/** How long the admin may take to answer and close (the bound of a hang, below the surface's). */
const ANSWER_MS = 4000;

export const adminRequests: FuzzSurface = {
  name: 'admin_requests',
  timeBoundMs: 5000,
  concurrency: 8,
  async open() {
    const live = await startLiveProxy();
    const connect = loopbackConnector(live.adminPort);
    return {
      generate(random: Random): FuzzInput {
        const text = Buffer.from(requestText(random), 'latin1');
        return { kind: 'http', bytes: random() < 0.2 ? mutateBytes(random, text, 2) : text };
      },
      // Every request says `Connection: close` and the client half-closes: the admin answers and closes, or it hangs.
      async run(input: FuzzInput) {
        if (!(await exchange(connect, input.bytes, ANSWER_MS))) throw new Error(`no answer and close within ${ANSWER_MS} ms`);
      },
      checkHealth: () => live.checkHealth(),
      close: () => live.close(),
    };
  },
};

function requestText(random: Random): string {
  const method = pick(random, ['GET', 'GET', 'GET', 'POST', 'HEAD', 'PUT', 'OPTIONS', 'DELETE']);
  const query = Array.from({ length: below(random, 4) }, () => {
    const key = pick(random, KEYS);
    const value = random() < 0.8 ? pick(random, VALUES) : pick(random, INTERESTING_TEXT);
    return random() < 0.1 ? key : `${key}=${percentEncoded(value).replace(/%25/g, random() < 0.5 ? '%' : '%25')}`;
  });
  const path = query.length > 0 ? `${pick(random, PATHS)}?${query.join('&')}` : pick(random, PATHS);
  const body = random() < 0.2 ? pick(random, INTERESTING_TEXT) : '';
  const headers = [
    'Host: 127.0.0.1',
    ...(body === '' ? [] : [`Content-Length: ${Buffer.byteLength(body, 'latin1')}`]),
    ...(random() < 0.2 ? [pick(random, ['Accept: application/json', 'Content-Type: application/x-www-form-urlencoded', 'Origin: http://evil.example', 'Sec-Fetch-Site: cross-site', 'Connection: close'])] : []),
  ];
  return `${method} ${path} HTTP/1.1\r\n${headers.map((h) => `${h}\r\n`).join('')}Connection: close\r\n\r\n${body}`;
}

/** `value`'s UTF-8 bytes, each outside the unreserved set as %XX (a lone surrogate too, as U+FFFD's). */
function percentEncoded(value: string): string {
  return [...Buffer.from(value, 'utf8')].map((b) => (/[A-Za-z0-9._~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).padStart(2, '0').toUpperCase()}`)).join('');
}
