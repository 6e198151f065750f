// The router filter's statistics, under `http.<stat_prefix>.` as in Envoy.

import type { Counter, Scope } from '../../stats/stats';

export class RouterStats {
  readonly no_route: Counter;
  readonly no_cluster: Counter;
  readonly rq_direct_response: Counter;
  readonly rq_total: Counter;
  readonly rq_reset_after_downstream_response_started: Counter;
  readonly rq_retry_skipped_request_not_complete: Counter;
  // Internal redirects a route's policy named that went downstream instead, by why.
  readonly passthrough_internal_redirect_bad_location: Counter;
  readonly passthrough_internal_redirect_unsafe_scheme: Counter;
  readonly passthrough_internal_redirect_too_many_redirects: Counter;
  readonly passthrough_internal_redirect_no_route: Counter;
  readonly passthrough_internal_redirect_predicate: Counter;

  constructor(scope: Scope) {
    this.no_route = scope.counter('no_route');
    this.no_cluster = scope.counter('no_cluster');
    this.rq_direct_response = scope.counter('rq_direct_response');
    this.rq_total = scope.counter('rq_total');
    this.rq_reset_after_downstream_response_started = scope.counter('rq_reset_after_downstream_response_started');
    this.rq_retry_skipped_request_not_complete = scope.counter('rq_retry_skipped_request_not_complete');
    this.passthrough_internal_redirect_bad_location = scope.counter('passthrough_internal_redirect_bad_location');
    this.passthrough_internal_redirect_unsafe_scheme = scope.counter('passthrough_internal_redirect_unsafe_scheme');
    this.passthrough_internal_redirect_too_many_redirects = scope.counter('passthrough_internal_redirect_too_many_redirects');
    this.passthrough_internal_redirect_no_route = scope.counter('passthrough_internal_redirect_no_route');
    this.passthrough_internal_redirect_predicate = scope.counter('passthrough_internal_redirect_predicate');
  }
}
