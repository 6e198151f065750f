// One row per command line option of the spec: its default, one valid value, and invalid uses
// with their exact message. The unit test checks the rows against the option rules, the
// integration test against the real binary (message on stderr, exit code 1).

import type { Options } from '../../src/cli/options';
import { DEFAULT_LOG_FORMAT } from '../../src/log/pattern';

export const USAGE_HINT = 'For complete USAGE and HELP type: proxy --help';

/** What the host reports in the unit tests: 4 hardware threads, 2 in this process's cpuset. */
export const TEST_HOST = {
  env: {},
  hardwareThreads: () => 4,
  cpusetThreads: () => 2,
};

export interface InvalidUse {
  readonly argv: readonly string[];
  /** All of stderr: options errors are printed alone. */
  readonly stderr: string;
}

export interface OptionCase {
  readonly option: string;
  /** Fields of Options when the option is absent (with TEST_HOST). */
  readonly defaults: Partial<Options>;
  readonly valid: { readonly argv: readonly string[]; readonly expect: Partial<Options>; readonly warnings?: readonly string[] };
  readonly invalid: readonly InvalidUse[];
}

export function syntaxError(argument: string, reason: string): string {
  return `PARSE ERROR: Argument: ${argument} -- ${reason}\n${USAGE_HINT}\n`;
}

const badValue = (argument: string, value: string): InvalidUse => ({
  argv: [argument, value],
  stderr: syntaxError(argument, `Couldn't read argument value from string '${value}'`),
});
const missingValue = (argument: string): InvalidUse => ({
  argv: [argument],
  stderr: syntaxError(argument, 'Missing a value for this argument!'),
});
const flagWithValue = (argument: string): InvalidUse => ({
  argv: [`${argument}=no`],
  stderr: syntaxError(argument, 'A flag takes no value'),
});
const optionsError = (argv: readonly string[], message: string): InvalidUse => ({ argv, stderr: `${message}\n` });

function flagCase(option: string, field: keyof Options, extra: Partial<Options> = {}): OptionCase {
  return {
    option,
    defaults: { [field]: false },
    valid: { argv: [option], expect: { [field]: true, ...extra } },
    invalid: [flagWithValue(option)],
  };
}

function textCase(option: string, field: keyof Options, value: string, fallback = ''): OptionCase {
  return {
    option,
    defaults: { [field]: fallback },
    valid: { argv: [option, value], expect: { [field]: value } },
    invalid: [missingValue(option)],
  };
}

function integerCase(option: string, field: keyof Options, fallback: number, value: number): OptionCase {
  return {
    option,
    defaults: { [field]: fallback },
    valid: { argv: [option, String(value)], expect: { [field]: value } },
    invalid: [badValue(option, 'x'), badValue(option, '-1'), badValue(option, '4294967296')],
  };
}

export const OPTION_CASES: readonly OptionCase[] = [
  { ...textCase('--config-path', 'configPath', 'bootstrap.yaml'), invalid: [missingValue('-c'), missingValue('--config-path')] },
  { ...textCase('-c', 'configPath', 'bootstrap.json'), invalid: [] },
  textCase('--config-yaml', 'configYaml', '{node: {id: a}}'),
  {
    option: '--bootstrap-version',
    defaults: { bootstrapVersion: null },
    valid: { argv: ['--bootstrap-version', '3'], expect: { bootstrapVersion: 3 } },
    invalid: [badValue('--bootstrap-version', 'v3')],
  },
  {
    option: '--mode',
    defaults: { mode: 'serve' },
    valid: { argv: ['--mode', 'validate'], expect: { mode: 'validate' } },
    invalid: [optionsError(['--mode', 'check'], "error: unknown mode 'check'")],
  },
  textCase('--admin-address-path', 'adminAddressPath', '/tmp/admin.address'),
  {
    option: '--local-address-ip-version',
    defaults: { localAddressIpVersion: 'v4' },
    valid: { argv: ['--local-address-ip-version', 'v6'], expect: { localAddressIpVersion: 'v6' } },
    invalid: [optionsError(['--local-address-ip-version', 'v5'], "error: unknown IP address version 'v5'")],
  },
  integerCase('--base-id', 'baseId', 0, 7),
  {
    ...flagCase('--use-dynamic-base-id', 'useDynamicBaseId'),
    invalid: [
      flagWithValue('--use-dynamic-base-id'),
      optionsError(['--use-dynamic-base-id', '--restart-epoch', '2'], 'error: cannot use --restart-epoch=2 with --use-dynamic-base-id'),
    ],
  },
  textCase('--base-id-path', 'baseIdPath', '/tmp/base.id'),
  {
    option: '--concurrency',
    defaults: { concurrency: 4 },
    valid: { argv: ['--concurrency', '0'], expect: { concurrency: 1 } },
    invalid: [badValue('--concurrency', 'two'), badValue('--concurrency', '-1')],
  },
  {
    ...flagCase('--cpuset-threads', 'cpusetThreads', { concurrency: 2 }),
    defaults: { cpusetThreads: false, concurrency: 4 },
  },
  {
    option: '--log-level',
    defaults: { logLevel: 'info' },
    valid: { argv: ['--log-level', 'warn'], expect: { logLevel: 'warning' } },
    invalid: [optionsError(['--log-level', 'loud'], "error: invalid log level specified 'loud'")],
  },
  {
    option: '-l',
    defaults: { logLevel: 'info' },
    valid: { argv: ['-l', 'trace'], expect: { logLevel: 'trace' } },
    invalid: [optionsError(['-l', 'INFO'], "error: invalid log level specified 'INFO'")],
  },
  {
    option: '--component-log-level',
    defaults: { componentLogLevel: '', componentLogLevels: [] },
    valid: {
      argv: ['--component-log-level', 'upstream:debug,connection:trace'],
      expect: { componentLogLevel: 'upstream:debug,connection:trace', componentLogLevels: [['upstream', 'debug'], ['connection', 'trace']] },
    },
    invalid: [
      optionsError(['--component-log-level', 'upstream'], "error: component log level not correctly specified 'upstream'"),
      optionsError(['--component-log-level', 'upstream:loud'], "error: invalid log level specified 'loud'"),
      optionsError(['--component-log-level', 'nosuch:debug'], "error: invalid component specified 'nosuch'"),
    ],
  },
  textCase('--log-path', 'logPath', '/tmp/proxy.log'),
  textCase('--log-format', 'logFormat', '[%L] %v', DEFAULT_LOG_FORMAT),
  {
    option: '--log-format-prefix-with-location',
    defaults: { logFormatPrefixWithLocation: false },
    valid: { argv: ['--log-format-prefix-with-location', '1'], expect: { logFormatPrefixWithLocation: true } },
    invalid: [badValue('--log-format-prefix-with-location', 'yes')],
  },
  flagCase('--log-format-escaped', 'logFormatEscaped'),
  integerCase('--restart-epoch', 'restartEpoch', 0, 3),
  flagCase('--enable-fine-grain-logging', 'enableFineGrainLogging'),
  {
    option: '--socket-path',
    defaults: { socketPath: '@proxy_domain_socket', socketMode: 0 },
    valid: { argv: ['--socket-path', '/tmp/proxy.sock'], expect: { socketPath: '/tmp/proxy.sock', socketMode: 0o600 } },
    invalid: [missingValue('--socket-path')],
  },
  {
    option: '--socket-mode',
    defaults: { socketMode: 0 },
    valid: { argv: ['--socket-path', '/tmp/proxy.sock', '--socket-mode', '644'], expect: { socketMode: 0o644 } },
    invalid: [
      optionsError(['--socket-path', '/tmp/proxy.sock', '--socket-mode', '9'], "error: invalid socket-mode '9'"),
      optionsError(['--socket-mode', '644'], "error: cannot use --socket-mode with the abstract --socket-path '@proxy_domain_socket'"),
      optionsError(
        ['--socket-path', '@other', '--socket-mode', '644'],
        "error: cannot use --socket-mode with the abstract --socket-path '@other'",
      ),
    ],
  },
  {
    ...flagCase('--hot-restart-version', 'hotRestartVersion'),
    // Answered only after every other option is checked.
    invalid: [flagWithValue('--hot-restart-version'), optionsError(['--hot-restart-version', '--mode', 'x'], "error: unknown mode 'x'")],
  },
  textCase('--service-cluster', 'serviceCluster', 'edge'),
  textCase('--service-node', 'serviceNode', 'edge-7'),
  textCase('--service-zone', 'serviceZone', 'eu-1a'),
  integerCase('--file-flush-interval-msec', 'fileFlushIntervalMsec', 10000, 250),
  integerCase('--drain-time-s', 'drainTimeS', 600, 30),
  {
    option: '--drain-strategy',
    defaults: { drainStrategy: 'gradual' },
    valid: { argv: ['--drain-strategy', 'immediate'], expect: { drainStrategy: 'immediate' } },
    invalid: [optionsError(['--drain-strategy', 'slow'], "error: unknown drain-strategy 'slow'")],
  },
  integerCase('--parent-shutdown-time-s', 'parentShutdownTimeS', 900, 60),
  flagCase('--disable-hot-restart', 'disableHotRestart'),
  flagCase('--enable-mutex-tracing', 'enableMutexTracing'),
  {
    option: '--allow-unknown-fields',
    defaults: { allowUnknownStaticFields: false },
    valid: {
      argv: ['--allow-unknown-fields'],
      expect: { allowUnknownStaticFields: true },
      warnings: ['--allow-unknown-fields is deprecated, use --allow-unknown-static-fields instead.'],
    },
    invalid: [flagWithValue('--allow-unknown-fields')],
  },
  flagCase('--allow-unknown-static-fields', 'allowUnknownStaticFields'),
  flagCase('--reject-unknown-dynamic-fields', 'rejectUnknownDynamicFields'),
  flagCase('--ignore-unknown-dynamic-fields', 'ignoreUnknownDynamicFields'),
  {
    option: '--disable-extensions',
    defaults: { disabledExtensions: [] },
    valid: {
      argv: ['--disable-extensions', 'proxy.filters.network/proxy.filters.network.tcp_proxy,,envoy.filters.http/envoy.filters.http.router'],
      expect: { disabledExtensions: ['proxy.filters.network/proxy.filters.network.tcp_proxy', 'envoy.filters.http/envoy.filters.http.router'] },
    },
    invalid: [missingValue('--disable-extensions')],
  },
  flagCase('--version', 'version'),
  flagCase('--help', 'help'),
  { ...flagCase('-h', 'help'), invalid: [] },
];

/** Misuse that is about no option in particular. */
export const COMMAND_LINE_ERRORS: readonly InvalidUse[] = [
  { argv: ['--bogus-flag'], stderr: syntaxError('--bogus-flag', "Couldn't find match for argument") },
  { argv: ['-x'], stderr: syntaxError('-x', "Couldn't find match for argument") },
  { argv: ['--configPath', 'a.yaml'], stderr: syntaxError('--configPath', "Couldn't find match for argument") },
  { argv: ['stray'], stderr: syntaxError('stray', "Couldn't find match for argument") },
];
