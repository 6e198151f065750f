// The router filter's statistics, under `http.<stat_prefix>.` as in Envoy.

import type { Counter, Scope } from '../../stats/stats';

export class RouterStats {
  readonly no_route: Counter;
  readonly no_cluster: Counter;
  readonly rq_direct_response: Counter;
  readonly rq_total: Counter;
  readonly rq_reset_after_downstream_response_started: Counter;
  readonly rq_retry_skipped_request_not_complete: Counter;

  constructor(scope: Scope) {
    this.no_route = scope.counter('no_route');
    this.no_cluster = scope.counter('no_cluster');
    this.rq_direct_response = scope.counter('rq_direct_response');
    this.rq_total = scope.counter('rq_total');
    this.rq_reset_after_downstream_response_started = scope.counter('rq_reset_after_downstream_response_started');
    this.rq_retry_skipped_request_not_complete = scope.counter('rq_retry_skipped_request_not_complete');
  }
}
