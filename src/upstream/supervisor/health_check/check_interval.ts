// When a host's next check runs (Envoy's HealthCheckerImplBase::interval and intervalWithJitter):
// the no-traffic interval until the cluster has ever had a connection, then the interval that
// fits the host's state, edge intervals while a threshold is counting, plus jitter, clamped by
// the runtime's health_check.min_interval / max_interval, and never 0.

import type { HealthCheck } from '../../../config/model';
import type { HealthTransition } from './verdict';
import type { RandomSource } from '../../../common/random';

export interface IntervalInputs {
  /** The cluster has had an upstream connection (upstream_cx_total was ever counted). */
  readonly hadTraffic: boolean;
  readonly minIntervalMs: number;
  readonly maxIntervalMs: number;
}

export function nextCheckDelay(
  config: HealthCheck,
  /** The check succeeded (Envoy's HealthState::Healthy), whatever the host's health. */
  succeeded: boolean,
  transition: HealthTransition,
  inputs: IntervalInputs,
  random: RandomSource,
): number {
  let base: number;
  if (!inputs.hadTraffic) base = config.noTrafficIntervalMs;
  else if (succeeded) base = transition === 'ChangePending' ? config.healthyEdgeIntervalMs : config.intervalMs;
  else base = transition === 'ChangePending' ? config.unhealthyEdgeIntervalMs : config.unhealthyIntervalMs;
  return withJitter(base, config.intervalJitterMs, config, inputs, random);
}

/** The first check's delay: a random share of initial_jitter, or none. */
export function initialCheckDelay(config: HealthCheck, inputs: IntervalInputs, random: RandomSource): number {
  return config.initialJitterMs === 0 ? 0 : withJitter(0, config.initialJitterMs, config, inputs, random);
}

function withJitter(baseMs: number, jitterMs: number, config: HealthCheck, inputs: IntervalInputs, random: RandomSource): number {
  let ms = baseMs;
  const percentMod = Math.floor((config.intervalJitterPercent * baseMs) / 100);
  if (percentMod > 0) ms += random() % percentMod;
  if (jitterMs > 0) ms += random() % jitterMs;
  return Math.max(1, Math.max(inputs.minIntervalMs, Math.min(ms, inputs.maxIntervalMs)));
}
