// A worker's outlier monitor of one host (Envoy's DetectorHostMonitorImpl): it counts each
// request's outcome into the host's record in shared memory, so that every worker's requests
// count together, as Envoy's threads share one monitor. Per request it does a few Atomics and
// nothing else; only a consecutive run reaching its threshold tells the supervisor, once.

import type { OutlierDetection } from '../../../config/model';
import type { RuntimeSource } from '../../../runtime/live_runtime';
import { HostRecordField } from '../../../shared_memory/region_layout';
import { CONSECUTIVE_RUNTIME_KEYS, type ConsecutiveFailure } from '../../shared/outlier/consecutive_failure';
import { type OutlierMonitor, OutlierResult } from './host_monitor';

const HTTP_OK = 200;
const HTTP_INTERNAL_SERVER_ERROR = 500;
const HTTP_SERVICE_UNAVAILABLE = 503;
const HTTP_GATEWAY_TIMEOUT = 504;

export class SharedHostMonitor implements OutlierMonitor {
  /**
   * @param words, index the host's record (HostTable.record): its outlier words are written here
   * @param onThreshold a consecutive run just reached its threshold: the supervisor ejects
   */
  constructor(
    private readonly words: Int32Array,
    private readonly index: number,
    private readonly config: OutlierDetection,
    private readonly runtime: RuntimeSource,
    private readonly onThreshold: (failure: ConsecutiveFailure) => void,
  ) {}

  putHttpResponseCode(code: number): void {
    const { words, index } = this;
    Atomics.add(words, index + HostRecordField.ExternalTotal, 1);
    if (code >= 500 && code < 600) {
      // 502, 503 and 504 say the upstream's own upstream failed: a gateway failure.
      if (code >= 502 && code <= 504) {
        this.countFailure(HostRecordField.ConsecutiveGatewayFailure, 'consecutive_gateway_failure', this.config.consecutiveGatewayFailure);
      } else {
        this.reset(HostRecordField.ConsecutiveGatewayFailure);
      }
      this.countFailure(HostRecordField.Consecutive5xx, 'consecutive_5xx', this.config.consecutive5xx);
    } else {
      Atomics.add(words, index + HostRecordField.ExternalSuccess, 1);
      this.reset(HostRecordField.Consecutive5xx);
      this.reset(HostRecordField.ConsecutiveGatewayFailure);
    }
  }

  putResult(result: OutlierResult): void {
    if (this.config.splitExternalLocalOriginErrors) this.putResultSplit(result);
    else this.putResultAsHttp(result);
  }

  /** Without the split, every result counts as the HTTP code Envoy gives it. */
  private putResultAsHttp(result: OutlierResult): void {
    switch (result) {
      case OutlierResult.ExtOriginRequestSuccess:
      case OutlierResult.LocalOriginConnectSuccessFinal:
        return this.putHttpResponseCode(HTTP_OK);
      case OutlierResult.LocalOriginTimeout:
        return this.putHttpResponseCode(HTTP_GATEWAY_TIMEOUT);
      case OutlierResult.LocalOriginConnectFailed:
        return this.putHttpResponseCode(HTTP_SERVICE_UNAVAILABLE);
      case OutlierResult.ExtOriginRequestFailed:
        return this.putHttpResponseCode(HTTP_INTERNAL_SERVER_ERROR);
      case OutlierResult.LocalOriginConnectSuccess:
        // The response's code is still to come: counting the connect too would count twice.
        return;
    }
  }

  /** With the split, connection-level results feed their own consecutive run and success rate. */
  private putResultSplit(result: OutlierResult): void {
    switch (result) {
      case OutlierResult.LocalOriginConnectSuccess:
      case OutlierResult.LocalOriginConnectSuccessFinal:
        return this.localOriginSuccess();
      case OutlierResult.LocalOriginTimeout:
      case OutlierResult.LocalOriginConnectFailed:
        Atomics.add(this.words, this.index + HostRecordField.LocalOriginTotal, 1);
        return this.countFailure(
          HostRecordField.ConsecutiveLocalOriginFailure,
          'consecutive_local_origin_failure',
          this.config.consecutiveLocalOriginFailure,
        );
      case OutlierResult.ExtOriginRequestFailed:
        return this.putHttpResponseCode(HTTP_SERVICE_UNAVAILABLE);
      case OutlierResult.ExtOriginRequestSuccess:
        this.putHttpResponseCode(HTTP_OK);
        return this.localOriginSuccess();
    }
  }

  private localOriginSuccess(): void {
    const { words, index } = this;
    Atomics.add(words, index + HostRecordField.LocalOriginTotal, 1);
    Atomics.add(words, index + HostRecordField.LocalOriginSuccess, 1);
    this.reset(HostRecordField.ConsecutiveLocalOriginFailure);
  }

  /** One more failure in a row; exactly one worker sees the count reach the threshold. */
  private countFailure(field: HostRecordField, failure: ConsecutiveFailure, configured: number): void {
    const count = Atomics.add(this.words, this.index + field, 1) + 1;
    if (count === this.runtime.snapshot().getInteger(CONSECUTIVE_RUNTIME_KEYS[failure], configured)) this.onThreshold(failure);
  }

  /** A load first: most requests succeed, and a shared write per request costs more than a read. */
  private reset(field: HostRecordField): void {
    if (Atomics.load(this.words, this.index + field) !== 0) Atomics.store(this.words, this.index + field, 0);
  }
}
