// Which role each admin endpoint needs: the one table the admin server enforces and the tests
// read (test/integration/admin_auth.test.ts asks every endpoint as every role, and checks that
// the table lists every path /help does). A path missing here needs admin: a new endpoint is
// closed until someone decides otherwise.
//
// viewer: every read that reveals no secret. operator: the operational mutations. admin: the
// rest: /quitquitquit, and the reads that can reveal secrets: /config_dump (Envoy redacts only
// the fields its protos mark sensitive, not a header value or an xDS server's credentials) and
// /server_info?format=json (it holds --config-yaml as given).

import type { AdminRole } from '../config/model';
import type { QueryParams } from './query';

export interface EndpointRole {
  readonly role: AdminRole;
  /** When the request's query makes it reveal secrets: it then needs `admin`. */
  readonly adminWhen?: (query: QueryParams) => boolean;
}

const viewer: EndpointRole = { role: 'viewer' };
const operator: EndpointRole = { role: 'operator' };
const admin: EndpointRole = { role: 'admin' };

export const ENDPOINT_ROLES: ReadonlyMap<string, EndpointRole> = new Map([
  ['/', viewer],
  ['/help', viewer],
  ['/dashboard.js', viewer],
  ['/dashboard.css', viewer],
  ['/server_info', { role: 'viewer', adminWhen: (query) => query.get('format') === 'json' }],
  ['/ready', viewer],
  ['/stats', viewer],
  ['/stats/prometheus', viewer],
  ['/stats/recentlookups', viewer],
  ['/clusters', viewer],
  ['/listeners', viewer],
  ['/init_dump', viewer],
  ['/certs', viewer],
  ['/memory', viewer],
  ['/hot_restart_version', viewer],
  ['/contention', viewer],
  ['/runtime', viewer],
  ['/config_dump', admin],
  ['/healthcheck/fail', operator],
  ['/healthcheck/ok', operator],
  ['/logging', operator],
  ['/runtime_modify', operator],
  ['/reset_counters', operator],
  ['/drain_listeners', operator],
  ['/cpuprofiler', operator],
  ['/heapprofiler', operator],
  ['/reopen_logs', operator],
  ['/stats/recentlookups/enable', operator],
  ['/stats/recentlookups/disable', operator],
  ['/stats/recentlookups/clear', operator],
  ['/quitquitquit', admin],
]);

const RANK: Readonly<Record<AdminRole, number>> = { viewer: 0, operator: 1, admin: 2 };

/** The role a request of `path` with `query` needs. */
export function requiredRole(path: string, query: QueryParams): AdminRole {
  const entry = ENDPOINT_ROLES.get(path);
  if (entry === undefined || entry.adminWhen?.(query) === true) return 'admin';
  return entry.role;
}

export function roleAllows(held: AdminRole, required: AdminRole): boolean {
  return RANK[held] >= RANK[required];
}
