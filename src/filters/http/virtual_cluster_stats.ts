// One virtual cluster's statistics, under `vhost.<virtual host>.vcluster.<virtual cluster>.` as
// Envoy 1.16 names them: its VirtualClusterStats counters, made with the route table (so /stats
// lists them at 0), and the response codes and upstream_rq_time the router charges, made on
// their first use as Envoy's code stats are.

import { ResponseCodeCounters } from '../../stats/response_code_counters';
import type { Counter, Histogram, Scope } from '../../stats/stats';
import type { RetryCounters } from './retry_state';

export class VirtualClusterStats implements RetryCounters {
  readonly upstream_rq_retry: Counter;
  readonly upstream_rq_retry_limit_exceeded: Counter;
  readonly upstream_rq_retry_overflow: Counter;
  readonly upstream_rq_retry_success: Counter;
  readonly upstream_rq_timeout: Counter;
  /** Each try that got an upstream stream, as the cluster's upstream_rq_total. */
  readonly upstream_rq_total: Counter;
  private readonly responseCodes: ResponseCodeCounters;
  private requestTime: Histogram | null = null;

  /** @param scope `vhost.<virtual host>.vcluster.<virtual cluster>` */
  constructor(private readonly scope: Scope) {
    this.upstream_rq_retry = scope.counter('upstream_rq_retry');
    this.upstream_rq_retry_limit_exceeded = scope.counter('upstream_rq_retry_limit_exceeded');
    this.upstream_rq_retry_overflow = scope.counter('upstream_rq_retry_overflow');
    this.upstream_rq_retry_success = scope.counter('upstream_rq_retry_success');
    this.upstream_rq_timeout = scope.counter('upstream_rq_timeout');
    this.upstream_rq_total = scope.counter('upstream_rq_total');
    this.responseCodes = new ResponseCodeCounters(scope);
  }

  /** Where the router charges the cluster's response code: upstream_rq_completed, _<N>xx, _<code>. */
  chargeResponseCode(code: number): void {
    this.responseCodes.charge(code);
  }

  /** upstream_rq_time: from the end of the downstream request to the end of the response. */
  recordRequestTime(ms: number): void {
    (this.requestTime ??= this.scope.histogram('upstream_rq_time', 'milliseconds')).recordValue(ms);
  }
}
