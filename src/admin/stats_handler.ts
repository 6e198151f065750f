// GET /stats: text (default), JSON and Prometheus, and GET /stats/prometheus, with Envoy's
// usedonly and filter parameters. Bodies are generators that the admin server streams.

import { InvalidRegexError, SafeRegex } from '../regex/safe_regex';
import { EMPTY_CHUNK } from './stats/chunk_buffer';
import type { PrometheusFormatter } from './stats/prometheus';
import { NameFilter, renderStatsJson, renderStatsText, StatsQuery } from './stats/render';
import type { StatsSnapshot } from '../stats/sample';
import { AdminHandler, AdminRequest, AdminResponse, JSON_TYPE } from './admin_server';

const FORMAT_USAGE = 'usage: /stats?format=json  or /stats?format=prometheus \n\n';

/** The query of either path, or the 400 an invalid filter gets. */
function statsQuery(req: AdminRequest): StatsQuery | AdminResponse {
  let filter: NameFilter | null = null;
  const pattern = req.query.get('filter');
  if (pattern !== undefined) {
    try {
      filter = SafeRegex.compile(pattern);
    } catch (e) {
      if (!(e instanceof InvalidRegexError)) throw e;
      return { status: 400, body: `Invalid regex: "${e.reason}"\n` };
    }
  }
  return { usedOnly: req.query.has('usedonly'), filter };
}

/** A snapshot taken in steps: each is a pause, a turn of the supervisor's event loop. */
export type SnapshotSteps = () => Generator<void, StatsSnapshot>;

/** The body of a response: pauses (empty chunks) while the snapshot is taken, then its rendering. */
function* rendered(snapshot: SnapshotSteps, render: (snapshot: StatsSnapshot) => Iterable<Uint8Array>): Generator<Uint8Array> {
  const steps = snapshot();
  let step = steps.next();
  while (step.done !== true) {
    yield EMPTY_CHUNK;
    step = steps.next();
  }
  yield* render(step.value);
}

/**
 * @param declared settles once every stat name the configuration has is interned (the workers
 *   intern the clusters' once they serve): every form lists them all
 */
export function statsHandlers(snapshot: SnapshotSteps, prometheus: PrometheusFormatter, declared: () => Promise<void>): AdminHandler[] {
  const prometheusResponse = (q: StatsQuery): AdminResponse => ({ status: 200, body: rendered(snapshot, (s) => prometheus.render(s, q)) });
  return [
    {
      path: '/stats',
      help: 'print server stats',
      mutatesState: false,
      decodeQuery: true,
      params: [
        { name: 'usedonly', help: 'only the stats that were ever updated', kind: 'flag' },
        { name: 'filter', help: 'only the stats whose names match this RE2 regex', kind: 'text' },
      ],
      async handle(req): Promise<AdminResponse> {
        const q = statsQuery(req);
        if ('status' in q) return q;
        await declared();
        const format = req.query.get('format');
        if (format === undefined) return { status: 200, body: rendered(snapshot, (s) => renderStatsText(s, q)) };
        if (format === 'json') return { status: 200, body: rendered(snapshot, (s) => renderStatsJson(s, q)), contentType: JSON_TYPE };
        if (format === 'prometheus') return prometheusResponse(q);
        return { status: 404, body: FORMAT_USAGE };
      },
    },
    {
      path: '/stats/prometheus',
      help: 'print server stats in prometheus format',
      mutatesState: false,
      decodeQuery: true,
      async handle(req): Promise<AdminResponse> {
        const q = statsQuery(req);
        if ('status' in q) return q;
        await declared();
        return prometheusResponse(q);
      },
    },
  ];
}
