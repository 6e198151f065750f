// Envoy's ENVOY_BUG and, in a release build that logs them, ASSERT: a failure of the proxy's own
// logic, caught where the server survives it (an admin handler's 500, a worker that is restarted),
// counts in server.debug_assertion_failures when an assertion failed, else in
// server.proxy_bug_failures. Either increment is a bug to report.

import { AssertionError } from 'node:assert';
import type { FailureCounters } from './server_stats';

/** node:assert's failures, and Node's own internal assertions (ERR_INTERNAL_ASSERTION). */
function isAssertionFailure(error: unknown): boolean {
  return error instanceof AssertionError || (error instanceof Error && (error as NodeJS.ErrnoException).code === 'ERR_INTERNAL_ASSERTION');
}

export function countCaughtFailure(counters: FailureCounters, error: unknown): void {
  (isAssertionFailure(error) ? counters.debugAssertionFailures : counters.proxyBugFailures).inc();
}
