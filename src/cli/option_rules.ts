// The meaning of the options: values checked and converted, defaults applied, and the rules
// between options, in the order Envoy 1.16 checks them (so the first error is Envoy's first).
// Pure: the options given, the environment and the host's CPU counts in; Options out.

import { parseComponentLogLevels } from '../log/component_levels';
import { LogOptionError } from '../log/errors';
import { parseLogLevelOption } from '../log/level';
import { deepFreeze } from '../common/deep_freeze';
import { CommandLineSyntaxError, OptionsError } from './errors';
import { OptionName, optionSpec, spelling } from './option_table';
import type { DrainStrategy } from '../hot_restart/drain_manager';
import type { IpVersion, Mode, Options } from './options';

/** The options present on the command line: a flag maps to true, a value option to its text. */
export type GivenOptions = ReadonlyMap<OptionName, string | true>;

/** What the defaults depend on outside the command line. */
export interface Host {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Hardware threads: the default of --concurrency. */
  hardwareThreads(): number;
  /** CPUs this process may run on (affinity and cgroup cpuset), for --cpuset-threads. */
  cpusetThreads(): number;
}

export interface ResolvedOptions {
  readonly options: Options;
  /** Lines to log at warning level once logging is up. */
  readonly warnings: readonly string[];
}

export const CONCURRENCY_CPUSET_WARNING =
  'Both --concurrency and --cpuset-threads options are set; not applying --cpuset-threads.';
export const ALLOW_UNKNOWN_FIELDS_WARNING =
  '--allow-unknown-fields is deprecated, use --allow-unknown-static-fields instead.';

const MODES: readonly Mode[] = ['serve', 'validate', 'init_only'];
const IP_VERSIONS: readonly IpVersion[] = ['v4', 'v6'];
const DRAIN_STRATEGIES: readonly DrainStrategy[] = ['gradual', 'immediate'];
const UINT32_MAX = 0xffff_ffff;

/** @throws CommandLineSyntaxError for a value of the wrong type, OptionsError for a broken rule */
export function resolveOptions(given: GivenOptions, host: Host): ResolvedOptions {
  const warnings: string[] = [];
  const flag = (name: OptionName): boolean => given.get(name) === true;
  const text = (name: OptionName): string => {
    const value = given.get(name);
    return typeof value === 'string' ? value : (optionSpec(name).default ?? '');
  };
  const integer = (name: OptionName): number => parseUint32(name, text(name));

  // Types first: TCLAP rejects a malformed value while parsing, before any rule is checked.
  const baseId = integer('base-id');
  const restartEpoch = parseUint32('restart-epoch', String(given.get('restart-epoch') ?? host.env['RESTART_EPOCH'] ?? '0'));
  const givenConcurrency = given.has('concurrency') ? integer('concurrency') : null;
  const bootstrapVersion = given.has('bootstrap-version') ? integer('bootstrap-version') : null;
  const drainTimeS = integer('drain-time-s');
  const parentShutdownTimeS = integer('parent-shutdown-time-s');
  const fileFlushIntervalMsec = integer('file-flush-interval-msec');
  const logFormatPrefixWithLocation = parseBool('log-format-prefix-with-location', text('log-format-prefix-with-location'));

  const logLevel = withLogErrors(() => parseLogLevelOption(text('log-level')));
  const componentLogLevels = withLogErrors(() => [...parseComponentLogLevels(text('component-log-level'))]);
  const mode = oneOf(MODES, text('mode'), (value) => `error: unknown mode '${value}'`);
  const localAddressIpVersion = oneOf(IP_VERSIONS, text('local-address-ip-version'), (value) => `error: unknown IP address version '${value}'`);

  const useDynamicBaseId = flag('use-dynamic-base-id');
  if (useDynamicBaseId && restartEpoch > 0) {
    throw new OptionsError(`error: cannot use --restart-epoch=${restartEpoch} with --use-dynamic-base-id`);
  }

  const cpusetThreads = flag('cpuset-threads');
  if (givenConcurrency !== null && cpusetThreads) warnings.push(CONCURRENCY_CPUSET_WARNING);
  const threads = givenConcurrency ?? (cpusetThreads ? host.cpusetThreads() : host.hardwareThreads());
  // Envoy runs one worker for --concurrency 0.
  const concurrency = Math.max(1, threads);

  const drainStrategy = oneOf(DRAIN_STRATEGIES, text('drain-strategy'), (value) => `error: unknown drain-strategy '${value}'`);
  const socketPath = text('socket-path');
  const socketMode = resolveSocketMode(socketPath, given.get('socket-mode'), text('socket-mode'));
  if (flag('allow-unknown-fields')) warnings.push(ALLOW_UNKNOWN_FIELDS_WARNING);

  const options: Options = {
    configPath: text('config-path'),
    configYaml: text('config-yaml'),
    bootstrapVersion,
    mode,
    adminAddressPath: text('admin-address-path'),
    localAddressIpVersion,
    baseId,
    useDynamicBaseId,
    baseIdPath: text('base-id-path'),
    restartEpoch,
    socketPath,
    socketMode,
    disableHotRestart: flag('disable-hot-restart'),
    drainTimeS,
    drainStrategy,
    parentShutdownTimeS,
    concurrency,
    cpusetThreads,
    logLevel,
    componentLogLevel: text('component-log-level'),
    componentLogLevels,
    logPath: text('log-path'),
    logFormat: text('log-format'),
    logFormatPrefixWithLocation,
    logFormatEscaped: flag('log-format-escaped'),
    enableFineGrainLogging: flag('enable-fine-grain-logging'),
    serviceCluster: text('service-cluster'),
    serviceNode: text('service-node'),
    serviceZone: text('service-zone'),
    fileFlushIntervalMsec,
    enableMutexTracing: flag('enable-mutex-tracing'),
    allowUnknownStaticFields: flag('allow-unknown-static-fields') || flag('allow-unknown-fields'),
    rejectUnknownDynamicFields: flag('reject-unknown-dynamic-fields'),
    ignoreUnknownDynamicFields: flag('ignore-unknown-dynamic-fields'),
    disabledExtensions: splitList(text('disable-extensions')),
    hotRestartVersion: flag('hot-restart-version'),
    version: flag('version'),
    help: flag('help'),
  };
  return { options: deepFreeze(options), warnings };
}

/**
 * The spec forbids --socket-mode with an abstract socket (a leading `@`, the default path),
 * which has no file to set a mode on; such a socket reports mode 0, as Envoy's does.
 */
function resolveSocketMode(socketPath: string, given: string | true | undefined, text: string): number {
  const abstract = socketPath.startsWith('@');
  if (abstract && given !== undefined) {
    throw new OptionsError(`error: cannot use --socket-mode with the abstract --socket-path '${socketPath}'`);
  }
  if (abstract) return 0;
  if (!/^[0-7]+$/.test(text) || Number.parseInt(text, 8) > UINT32_MAX) {
    throw new OptionsError(`error: invalid socket-mode '${text}'`);
  }
  return Number.parseInt(text, 8);
}

/** Envoy's options are uint32_t: digits only, no sign, at most 2^32 - 1. */
function parseUint32(name: OptionName, text: string): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || value > UINT32_MAX) {
    throw new CommandLineSyntaxError(spelling(name), `Couldn't read argument value from string '${text}'`);
  }
  return value;
}

/** A bool value as TCLAP reads one: 1 or 0. */
function parseBool(name: OptionName, text: string): boolean {
  if (text !== '1' && text !== '0') {
    throw new CommandLineSyntaxError(spelling(name), `Couldn't read argument value from string '${text}'`);
  }
  return text === '1';
}

function oneOf<T extends string>(allowed: readonly T[], value: string, message: (value: string) => string): T {
  if (!(allowed as readonly string[]).includes(value)) throw new OptionsError(message(value));
  return value as T;
}

/** The logging parsers carry Envoy's messages already; here they become command line errors. */
function withLogErrors<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof LogOptionError) throw new OptionsError(error.message);
    throw error;
  }
}

/** Comma-separated, blank entries skipped (absl::SkipWhitespace). */
function splitList(text: string): string[] {
  return text.split(',').filter((entry) => entry.trim() !== '');
}
