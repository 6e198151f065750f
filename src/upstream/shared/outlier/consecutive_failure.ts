// The three runs of failures that eject a host the moment one reaches its threshold, instead of
// waiting for the interval. The name is also the config field and runtime key of the threshold.

export type ConsecutiveFailure = 'consecutive_5xx' | 'consecutive_gateway_failure' | 'consecutive_local_origin_failure';

/** Runtime key of a threshold or an enforcing percentage: `outlier_detection.<field>`. */
export function outlierRuntimeKey(field: string): string {
  return `outlier_detection.${field}`;
}

/** The runtime keys of the thresholds, made once: a worker reads one at each failure. */
export const CONSECUTIVE_RUNTIME_KEYS: Readonly<Record<ConsecutiveFailure, string>> = {
  consecutive_5xx: 'outlier_detection.consecutive_5xx',
  consecutive_gateway_failure: 'outlier_detection.consecutive_gateway_failure',
  consecutive_local_origin_failure: 'outlier_detection.consecutive_local_origin_failure',
};
