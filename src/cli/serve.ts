// Serving a validated bootstrap: the supervisor of this epoch, the process's signals, and the
// exit that waits for the logs. main.ts loads this module only once a configuration is valid and
// the mode serves, so that --mode validate never loads the supervisor and what it runs.

import type { ChildProcess } from 'node:child_process';
import * as os from 'node:os';
import { AccessLogManager } from '../access_log/access_log_manager';
import { SystemClock } from '../common/clock';
import type { BuiltinExtensions } from '../extensions/builtin_extensions';
import type { Bootstrap } from '../config/model';
import { applyServiceOverrides } from '../config/node_overrides';
import type { LoggerFactory } from '../log/logger_api';
import type { LogManager } from '../log/log_manager';
import type { LogSettings } from '../log/log_settings';
import { readBuildInfo } from '../server/build_info';
import type { ReadinessFd } from '../server/readiness_fd';
import { Supervisor } from '../server/supervisor';
import type { SystemdNotifier } from '../server/systemd_notify';
import { localAddress } from './local_address';
import type { Options } from './options';

export interface ServeInput {
  readonly options: Options;
  readonly bootstrap: Bootstrap;
  /** The unknown static fields the load accepted (--allow-unknown-static-fields). */
  readonly unknownFields: readonly string[];
  readonly extensions: BuiltinExtensions;
  readonly log: LoggerFactory;
  readonly logSettings: LogSettings;
  readonly logs: LogManager;
  /** What --hot-restart-version prints: this build's shared memory layout, or `disabled`. */
  readonly hotRestartVersion: string;
  /** Logs a critical line, also on stderr when the log does not reach it. */
  readonly critical: (line: string) => void;
  /** Exits with `code` once the log lines before it are written. */
  readonly exitAfterLogs: (code: number) => void;
  /** The workers, forked (forkWorker) before the configuration was loaded. */
  readonly workers: readonly ChildProcess[];
  /** systemd's socket and the hot-restarter's readiness descriptor, taken from the environment before the workers were forked. */
  readonly notifier: SystemdNotifier;
  readonly readiness: ReadinessFd;
}

export async function serve(input: ServeInput): Promise<void> {
  const { options, bootstrap, unknownFields, extensions, log, logSettings, logs, hotRestartVersion, critical, exitAfterLogs, workers, notifier, readiness } = input;
  const mainLog = log('main').forFile(__filename);
  const accessLogs = new AccessLogManager({
    flushIntervalMs: options.fileFlushIntervalMsec,
    onError: (path, error) => mainLog.error(`access log ${path}: ${error.message}`),
  });
  // Buffered access log lines are written first, then the log's.
  const exit = (code: number) => void accessLogs.close().finally(() => exitAfterLogs(code));
  // SIGUSR1 and POST /reopen_logs: every log file of every process, after logrotate moved them.
  const reopenLogs = () => {
    void accessLogs.reopen();
    logs.reopen().catch((error: Error) => process.stderr.write(`cannot reopen ${options.logPath}: ${error.message}\n`));
    supervisor.reopenLogs();
  };
  const supervisor = new Supervisor({
    options,
    bootstrap: serverBootstrap(bootstrap, options),
    build: readBuildInfo(),
    log,
    logSettings,
    logs,
    exit,
    accessLogs,
    hotRestartVersion,
    staticUnknownFields: new Set(unknownFields).size,
    notifier,
    readiness,
    clock: new SystemClock(),
    reopenAllLogs: reopenLogs,
    extensions,
    forkedWorkers: workers,
  });
  const stop = (signal: string) => () => {
    mainLog.warn(`caught ${signal}`);
    void supervisor.stop(signal).then(() => exit(0));
  };
  process.on('SIGTERM', stop('SIGTERM'));
  process.on('SIGINT', stop('SIGINT'));
  process.on('SIGUSR1', () => {
    mainLog.warn('caught SIGUSR1. Reopening access logs.');
    reopenLogs();
  });
  process.on('SIGHUP', () => mainLog.warn('caught and eating SIGHUP. See documentation for how to hot restart.'));
  try {
    await supervisor.start();
  } catch (error) {
    critical(`error starting the server: ${(error as Error).message}`);
    await supervisor.shutdown('start failed');
    exit(1);
    return;
  }
  if (options.mode === 'init_only') {
    await supervisor.shutdown('--mode init_only: initialized');
    exit(0);
  }
}

/** The model the server runs: the node as --service-* override it, and the local address. */
function serverBootstrap(bootstrap: Bootstrap, options: Options): Bootstrap {
  return {
    ...applyServiceOverrides(bootstrap, options),
    localAddress: localAddress(os.networkInterfaces(), options.localAddressIpVersion),
  };
}
