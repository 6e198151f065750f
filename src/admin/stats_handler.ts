// GET /stats: text (default) and JSON, with Envoy's usedonly and filter parameters.

import { InvalidRegexError, SafeRegex } from '../regex/safe_regex';
import type { ScalarSample } from '../stats/sample';
import { renderStatsJson, renderStatsText, selectStats } from '../stats/render';
import { AdminHandler, AdminResponse, JSON_TYPE } from './admin_server';

const FORMAT_USAGE = 'usage: /stats?format=json  or /stats?format=prometheus \n\n';

export function statsHandler(read: () => readonly ScalarSample[]): AdminHandler {
  return {
    path: '/stats',
    help: 'print server stats',
    mutatesState: false,
    decodeQuery: true,
    handle(req): AdminResponse {
      let filter: SafeRegex | null = null;
      const pattern = req.query.get('filter');
      if (pattern !== undefined) {
        try {
          filter = SafeRegex.compile(pattern);
        } catch (e) {
          if (!(e instanceof InvalidRegexError)) throw e;
          return { status: 400, body: `Invalid regex: "${e.reason}"\n` };
        }
      }
      const selected = selectStats(read(), { usedOnly: req.query.has('usedonly'), filter });
      const format = req.query.get('format');
      if (format === undefined) return { status: 200, body: renderStatsText(selected) };
      if (format === 'json') return { status: 200, body: renderStatsJson(selected), contentType: JSON_TYPE };
      return { status: 404, body: FORMAT_USAGE };
    },
  };
}
