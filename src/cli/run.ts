// After the command line: the logs, the configuration (loaded, validated, its data plane built
// once), then the answer of --mode validate or serving. main.ts loads this module once it has
// forked the workers, which load their code while this process loads the configuration's.

import type { ChildProcess } from 'node:child_process';
import { adminProtection } from '../admin/admin_protection';
import { ConfigError, ConfigErrors, inConfigFile } from '../config/errors';
import { loadBootstrap, LoadedBootstrap } from '../config/load';
import { applyServiceOverrides } from '../config/node_overrides';
import { checkBootstrapSubscriptions } from '../config/xds/subscription_preconditions';
import { checkStatsSinkPreconditions } from '../config/stats_sink_preconditions';
import type { Logger, LoggerFactory } from '../log/logger_api';
import { LogSettings, loggerFactory, openLogs } from '../log/log_settings';
import { builtinExtensions, type BuiltinExtensions } from '../extensions/builtin_extensions';
import { constructDataPlane } from '../server/data_plane_construction';
import type { ReadinessFd } from '../server/readiness_fd';
import type { SystemdNotifier } from '../server/systemd_notify';
import { NamingStatsStore } from '../stats/naming_store';
import { SecretStore } from '../tls/secret_store';
import { fail } from './fail';
import type { Options } from './options';

/** What main() began before the configuration's modules loaded. */
export interface Started {
  /** The workers (forkWorker), empty for --mode validate. */
  readonly workers: readonly ChildProcess[];
  /** systemd's socket and the hot-restarter's readiness descriptor, taken from the environment before the fork. */
  readonly notifier: SystemdNotifier;
  readonly readiness: ReadinessFd;
  /** What --hot-restart-version prints: this build's shared memory layout, or `disabled`. */
  readonly hotRestartVersion: string;
}

/**
 * Opens the logs, loads and validates the configuration, then answers (--mode validate) or serves.
 * @param started what main() began before this module loaded
 */
export async function run(options: Options, warnings: readonly string[], started: Started): Promise<void> {
  const { workers, notifier, readiness, hotRestartVersion } = started;
  const logSettings = logSettingsOf(options);
  const logs = await openLogs(logSettings, process.pid).catch((error: NodeJS.ErrnoException) =>
    fail(`unable to open file '${options.logPath}': ${error.message}`),
  );
  const log = loggerFactory(logs);
  const mainLog = log('main').forFile(__filename);
  for (const warning of warnings) mainLog.warn(warning);

  // Every exit waits for the log lines before it to be written, in order.
  const exitAfterLogs = (code: number) => void logs.flush().finally(() => process.exit(code));
  const extensions = builtinExtensions();
  const loaded = loadOrReport(options, log, extensions);
  if (loaded === null) {
    for (const worker of workers) worker.kill('SIGTERM');
    return exitAfterLogs(1);
  }
  if (options.mode === 'validate') {
    process.stdout.write(`configuration '${options.configPath}' OK\n`);
    return exitAfterLogs(0);
  }

  // Serving's modules (the supervisor and all it runs) are loaded only now: a validation never pays for them.
  const { serve } = await import('./serve');
  await serve({
    options,
    bootstrap: loaded.bootstrap,
    unknownFields: loaded.unknownFields,
    extensions,
    log,
    logSettings,
    logs,
    hotRestartVersion,
    critical: (line) => reportCritical(mainLog, options, line),
    exitAfterLogs,
    workers,
    notifier,
    readiness,
  });
}

/**
 * Loads and validates the bootstrap and builds the workers' data plane from it (without serving),
 * logging what Envoy logs along the way: the extensions disabled, deprecated fields, and each
 * distinct unknown field accepted. When it is invalid, logs why and returns null.
 */
function loadOrReport(options: Options, logFactory: LoggerFactory, extensions: BuiltinExtensions): LoadedBootstrap | null {
  const log = logFactory('main').forFile(__filename);
  const disabled = extensions.resolveDisabled(options.disabledExtensions);
  for (const note of disabled.notes) {
    if (note.level === 'info') log.info(note.text);
    else log.warn(note.text);
  }
  const source = options.configPath || '--config-yaml';
  let loaded: LoadedBootstrap;
  try {
    loaded = loadBootstrap({
      extensions,
      configPath: options.configPath,
      configYaml: options.configYaml,
      bootstrapVersion: options.bootstrapVersion,
      allowUnknownStaticFields: options.allowUnknownStaticFields,
      disabledExtensions: disabled.keys,
      serviceCluster: options.serviceCluster,
    });
    const node = applyServiceOverrides(loaded.bootstrap, options).node;
    inConfigFile(source, () => {
      checkBootstrapSubscriptions(loaded.bootstrap, node);
      checkStatsSinkPreconditions(loaded.bootstrap, node);
    });
    // A worker that cannot build what it is given would fail after the epoch started (and, under
    // the hot restarter, stop the epochs serving): the same constructors refuse it here.
    constructDataPlane(loaded.bootstrap, source, logFactory);
    // The admin's token files and TLS material, as the supervisor will load them.
    const security = loaded.bootstrap.admin?.security;
    if (security) inConfigFile(source, () => adminProtection(security, new SecretStore(loaded.bootstrap.secrets), new NamingStatsStore()));
  } catch (thrown) {
    // No input may end in a stack trace: what the loader did not foresee is still one line
    // naming the configuration (the trace is for developers, at debug level).
    if (!(thrown instanceof ConfigError)) log.debug(`unforeseen error: ${thrown instanceof Error ? thrown.stack : String(thrown)}`);
    const error = thrown instanceof ConfigError ? thrown : new ConfigError(source, '', String(thrown));
    // Validate mode, like a start, names every invalid resource, one line each.
    for (const each of error instanceof ConfigErrors ? error.all : [error]) {
      reportCritical(log, options, `error initializing configuration '${options.configPath}': ${each.message}`);
    }
    return null;
  }
  for (const warning of loaded.warnings) log.warn(warning);
  for (const field of new Set(loaded.unknownFields)) log.warn(`Unknown field: ${field}`);
  return loaded;
}

function logSettingsOf(options: Options): LogSettings {
  return {
    level: options.logLevel,
    componentLevels: options.componentLogLevels,
    format: options.logFormat,
    prefixWithLocation: options.logFormatPrefixWithLocation,
    escaped: options.logFormatEscaped,
    path: options.logPath,
    fineGrain: options.enableFineGrainLogging,
    fileLevels: [],
  };
}

/** A critical line, also on stderr when the log does not reach it (a file, or silenced). */
function reportCritical(log: Logger, options: Options, line: string): void {
  log.critical(line);
  if (options.logPath !== '' || !log.enabled('critical')) process.stderr.write(`${line}\n`);
}
