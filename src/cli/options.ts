// The command line as the rest of the proxy sees it: one frozen, plain (structured-clone safe)
// object, every option of the spec resolved to its value, defaults included.

import type { DrainStrategy } from '../hot_restart/drain_manager';
import type { HotRestartOptions } from '../hot_restart/hot_restart';
import type { ComponentName } from '../log/components';
import type { LogLevel } from '../log/level';

export type Mode = 'serve' | 'validate' | 'init_only';
export type IpVersion = 'v4' | 'v6';

/** Every option; the hot restart ones (base id, epoch, socket) are HotRestartOptions'. */
export interface Options extends HotRestartOptions {
  readonly configPath: string;
  readonly configYaml: string;
  /** --bootstrap-version; null when unset (try v2, then v3). */
  readonly bootstrapVersion: number | null;
  readonly mode: Mode;
  readonly adminAddressPath: string;
  readonly localAddressIpVersion: IpVersion;

  readonly disableHotRestart: boolean;
  readonly drainTimeS: number;
  readonly drainStrategy: DrainStrategy;
  readonly parentShutdownTimeS: number;

  /** Worker processes, at least 1. */
  readonly concurrency: number;
  readonly cpusetThreads: boolean;

  readonly logLevel: LogLevel;
  /** --component-log-level as written (reported by /server_info). */
  readonly componentLogLevel: string;
  /** --component-log-level parsed, in the order written. */
  readonly componentLogLevels: readonly (readonly [ComponentName, LogLevel])[];
  readonly logPath: string;
  readonly logFormat: string;
  readonly logFormatPrefixWithLocation: boolean;
  readonly logFormatEscaped: boolean;
  readonly enableFineGrainLogging: boolean;

  readonly serviceCluster: string;
  readonly serviceNode: string;
  readonly serviceZone: string;

  readonly fileFlushIntervalMsec: number;
  readonly enableMutexTracing: boolean;

  /** --allow-unknown-static-fields, or its deprecated alias --allow-unknown-fields. */
  readonly allowUnknownStaticFields: boolean;
  readonly rejectUnknownDynamicFields: boolean;
  readonly ignoreUnknownDynamicFields: boolean;
  /** `<category>/<name>` entries as written. */
  readonly disabledExtensions: readonly string[];

  readonly hotRestartVersion: boolean;
  readonly version: boolean;
  readonly help: boolean;
}
