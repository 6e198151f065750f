// The proxy binary: the command line, then --help/--version/--hot-restart-version, validation,
// or serving. Exit codes follow Envoy: 0 for a clean shutdown or an answered query, 1 for any
// error.

import { oneLine } from '../config/errors';
import { readBuildInfo, versionString } from '../server/build_info';
import { ReadinessFd } from '../server/readiness_fd';
import { SystemdNotifier } from '../server/systemd_notify';
import { forkWorker } from '../server/worker_launch';
import { hotRestartVersion } from '../shared_memory/region_layout';
import { CommandLine, helpText, parseCommandLine } from './command_line';
import { cpusetThreads, hardwareThreads } from './cpu_count';
import { CommandLineSyntaxError, OptionsError } from './errors';
import { fail } from './fail';
import type { Options } from './options';

export function main(argv: readonly string[]): void {
  let commandLine: CommandLine;
  try {
    commandLine = parseCommandLine(argv, { env: process.env, hardwareThreads, cpusetThreads });
  } catch (error) {
    if (error instanceof CommandLineSyntaxError || error instanceof OptionsError) fail(error.message);
    throw error;
  }
  switch (commandLine.kind) {
    case 'help':
      void helpText().then((text) => process.stdout.write(`${text}\n`));
      return;
    case 'version':
      process.stdout.write(`\nproxy  version: ${versionString(readBuildInfo())}\n\n`);
      return;
    case 'run':
      break;
  }
  const { options, warnings } = commandLine;
  if (options.hotRestartVersion) {
    // Envoy's answer goes to stderr, without a newline.
    process.stderr.write(hotRestartVersionOf(options));
    return;
  }
  // Taken from the environment before the workers are forked, which must not inherit them: only
  // the supervisor tells systemd and the hot-restarter how the start goes.
  const notifier = SystemdNotifier.takeFromEnvironment(process.env);
  const readiness = ReadinessFd.takeFromEnvironment(process.env);
  // The workers load their code while this process loads the configuration and its modules
  // (module loading is most of a start); they are handed their listen sockets with their start.
  const workers = options.mode === 'validate' ? [] : Array.from({ length: options.concurrency }, forkWorker);
  const { run } = require('./run') as typeof import('./run');
  // Errors are one line (the loader names the configuration's own); a trace is no answer.
  run(options, warnings, { workers, notifier, readiness, hotRestartVersion: hotRestartVersionOf(options) }).catch((error: unknown) =>
    fail(`proxy: ${oneLine(String(error))}`),
  );
}

function hotRestartVersionOf(options: Options): string {
  return options.disableHotRestart ? 'disabled' : hotRestartVersion();
}
