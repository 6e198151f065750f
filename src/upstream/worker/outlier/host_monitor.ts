// What a worker tells outlier detection about each request to a host (Envoy's
// DetectorHostMonitor): the router and tcp_proxy report outcomes here, and the cluster's
// detector turns them into ejections. A cluster without outlier_detection has nothing to
// record, so its hosts carry NO_OUTLIER_MONITOR.

/** Envoy's Outlier::Result: whether a failure was the upstream's answer or never reached it. */
export const enum OutlierResult {
  /** The upstream answered with a failure (5xx). */
  ExtOriginRequestFailed,
  ExtOriginRequestSuccess,
  /** The connection could not be made, or broke before an answer. */
  LocalOriginConnectFailed,
  /** Connected; the request's verdict is still to come. */
  LocalOriginConnectSuccess,
  LocalOriginTimeout,
  /** Connected, and nothing more will be reported for this use (tcp_proxy). */
  LocalOriginConnectSuccessFinal,
}

export interface OutlierMonitor {
  /** An HTTP response's status code from the upstream. */
  putHttpResponseCode(code: number): void;
  /** A result that is not a response code (a failed connect, a timeout, a reset). */
  putResult(result: OutlierResult): void;
}

export const NO_OUTLIER_MONITOR: OutlierMonitor = {
  putHttpResponseCode: () => {},
  putResult: () => {},
};
