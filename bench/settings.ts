// What one benchmark run measures. Every row gets the same load so that rows compare; only the
// duration and the row selection can be changed, through the environment.

import { GROUPS, SUBJECTS, type Selection, type Subject } from './plan';

/** The load one measured run puts on a proxy; `make bench` and `make bench-compare` share it. */
export interface LoadSettings {
  /** Length of each measured wrk run. */
  readonly durationSeconds: number;
  /** Length of the unmeasured wrk run before each row's rounds. */
  readonly warmupSeconds: number;
  readonly connections: number;
  readonly threads: number;
}

export interface BenchSettings extends LoadSettings {
  /** Measured wrk runs per row; the row reports their medians. */
  readonly rounds: number;
  readonly selection: Selection;
}

export class BenchSettingsError extends Error {
  override readonly name = 'BenchSettingsError';
}

const DEFAULT_DURATION_SECONDS = 10;

/** Reads BENCH_DURATION (e.g. `5s`, `1m`, `30`) and BENCH_ONLY (e.g. `direct,nginx,tcp`). */
export function readSettings(env: Readonly<Record<string, string | undefined>>): BenchSettings {
  return { ...readLoadSettings(env), rounds: 3, selection: parseSelection(env.BENCH_ONLY ?? '') };
}

/** Reads BENCH_DURATION (e.g. `5s`, `1m`, `30`). */
export function readLoadSettings(env: Readonly<Record<string, string | undefined>>): LoadSettings {
  return {
    durationSeconds: env.BENCH_DURATION ? parseDurationSeconds(env.BENCH_DURATION) : DEFAULT_DURATION_SECONDS,
    warmupSeconds: 2,
    connections: 50,
    threads: 1,
  };
}

/** A whole number of seconds or minutes, in the notation wrk accepts: `10`, `10s`, `2m`. */
export function parseDurationSeconds(text: string, name = 'BENCH_DURATION'): number {
  const match = /^(\d+)(s|m)?$/.exec(text.trim());
  const amount = match ? Number(match[1]) : 0;
  if (!match || amount === 0) {
    throw new BenchSettingsError(`${name} must be a positive whole number of seconds or minutes (10s, 2m), got '${text}'`);
  }
  return match[2] === 'm' ? amount * 60 : amount;
}

/** Comma-separated subjects (direct, nginx, node, proxy) and/or groups (http, http-16k, tcp). */
export function parseSelection(text: string): Selection {
  const subjects = new Set<Subject>();
  const groups = new Set<string>();
  const groupIds = GROUPS.map((group) => group.id);
  for (const token of text.split(',').map((part) => part.trim()).filter((part) => part !== '')) {
    if ((SUBJECTS as readonly string[]).includes(token)) {
      subjects.add(token as Subject);
    } else if (groupIds.includes(token)) {
      groups.add(token);
    } else {
      throw new BenchSettingsError(
        `BENCH_ONLY: unknown row '${token}'; use subjects (${SUBJECTS.join(', ')}) and/or groups (${groupIds.join(', ')})`,
      );
    }
  }
  return { subjects, groups };
}
