// Every command line option of the spec, as data: its name, short form, whether it takes a
// value, its default and its help text. yargs' parser reads the command line by this table and
// --help prints it; option_rules.ts gives the values their meaning.

import { DEFAULT_LOG_FORMAT } from '../log/pattern';

export interface OptionSpec {
  /** Without the leading `--`. */
  readonly name: string;
  /** One letter, without the leading `-`. */
  readonly short?: string;
  /** A flag is present or absent; a value option takes exactly one argument. */
  readonly kind: 'flag' | 'value';
  /** The value used when the option is absent; absent when the rules compute it. */
  readonly default?: string;
  readonly describe: string;
}

export const OPTION_TABLE = [
  { name: 'config-path', short: 'c', kind: 'value', default: '',
    describe: 'Bootstrap file: .json, .yaml/.yml, .pb (binary proto3) or .pb_text (text proto3)' },
  { name: 'config-yaml', kind: 'value', default: '',
    describe: 'Bootstrap as YAML (or JSON), merged over --config-path: objects by key, lists replace' },
  { name: 'bootstrap-version', kind: 'value',
    describe: 'API version of the bootstrap (2 or 3); unset: try v2 (upgraded), then v3' },
  { name: 'mode', kind: 'value', default: 'serve',
    describe: 'serve; validate (check the configuration, then exit); init_only (start, then exit)' },
  { name: 'admin-address-path', kind: 'value', default: '',
    describe: 'File to write the admin address and port to' },
  { name: 'local-address-ip-version', kind: 'value', default: 'v4',
    describe: 'v4 or v6: IP version of the server local address' },
  { name: 'base-id', kind: 'value', default: '0',
    describe: 'Base id of the shared memory region and hot restart sockets; unique per proxy on a host' },
  { name: 'use-dynamic-base-id', kind: 'flag',
    describe: 'Pick an unused base id (not with a non-zero --restart-epoch)' },
  { name: 'base-id-path', kind: 'value', default: '',
    describe: 'File to write the base id to' },
  { name: 'concurrency', kind: 'value',
    describe: 'Worker processes (default: hardware threads; 0 runs one)' },
  { name: 'cpuset-threads', kind: 'flag',
    describe: 'Without --concurrency, size the workers by the CPUs this process may run on' },
  { name: 'log-level', short: 'l', kind: 'value', default: 'info',
    describe: 'trace debug info warning error critical off' },
  { name: 'component-log-level', kind: 'value', default: '',
    describe: '<component>:<level>,...: per-component log levels' },
  { name: 'log-path', kind: 'value', default: '',
    describe: 'Log file, reopened on SIGUSR1 (default: stderr)' },
  { name: 'log-format', kind: 'value', default: DEFAULT_LOG_FORMAT,
    describe: 'Log line format (spdlog flags)' },
  { name: 'log-format-prefix-with-location', kind: 'value', default: '0',
    describe: '1 or 0: replace every %v of the format with [%g:%#] %v (to be removed at 1.17.0)' },
  { name: 'log-format-escaped', kind: 'flag',
    describe: 'Escape C-style sequences so that one entry never spans lines' },
  { name: 'restart-epoch', kind: 'value',
    describe: 'Hot restart epoch (default: $RESTART_EPOCH, else 0)' },
  { name: 'enable-fine-grain-logging', kind: 'flag',
    describe: 'One logger per source file, with file-level log control' },
  { name: 'socket-path', kind: 'value', default: '@proxy_domain_socket',
    describe: 'Hot restart socket; a leading @ is the abstract namespace' },
  { name: 'socket-mode', kind: 'value', default: '600',
    describe: 'Octal file mode of a non-abstract hot restart socket' },
  { name: 'hot-restart-version', kind: 'flag',
    describe: 'Print the hot restart compatibility version and exit' },
  { name: 'service-cluster', kind: 'value', default: '',
    describe: 'Overrides the bootstrap node.cluster' },
  { name: 'service-node', kind: 'value', default: '',
    describe: 'Overrides the bootstrap node.id' },
  { name: 'service-zone', kind: 'value', default: '',
    describe: 'Overrides the bootstrap node.locality.zone' },
  { name: 'file-flush-interval-msec', kind: 'value', default: '10000',
    describe: 'Access log files flush when their buffer is full or after this interval' },
  { name: 'drain-time-s', kind: 'value', default: '600',
    describe: 'Seconds connections drain during a hot restart or listener removal' },
  { name: 'drain-strategy', kind: 'value', default: 'gradual',
    describe: 'gradual (over the drain time) or immediate' },
  { name: 'parent-shutdown-time-s', kind: 'value', default: '900',
    describe: 'Seconds before the parent process is shut down in a hot restart' },
  { name: 'disable-hot-restart', kind: 'flag',
    describe: 'No hot restart: a private stats region, no shared region or hot restart socket' },
  { name: 'enable-mutex-tracing', kind: 'flag',
    describe: 'Count lock contention, reported by GET /contention' },
  { name: 'allow-unknown-fields', kind: 'flag',
    describe: 'Deprecated alias of --allow-unknown-static-fields' },
  { name: 'allow-unknown-static-fields', kind: 'flag',
    describe: 'Accept unknown fields in the bootstrap (warned and counted)' },
  { name: 'reject-unknown-dynamic-fields', kind: 'flag',
    describe: 'Reject unknown fields in dynamic configuration' },
  { name: 'ignore-unknown-dynamic-fields', kind: 'flag',
    describe: 'Accept unknown dynamic fields without warning or counting them' },
  { name: 'disable-extensions', kind: 'value', default: '',
    describe: '<category>/<name>,...: extensions configuration may not use' },
  { name: 'version', kind: 'flag', describe: 'Print version and build information and exit' },
  { name: 'help', short: 'h', kind: 'flag', describe: 'Print this help and exit' },
] as const satisfies readonly OptionSpec[];

export type OptionName = (typeof OPTION_TABLE)[number]['name'];

const BY_NAME: ReadonlyMap<string, OptionSpec> = new Map(OPTION_TABLE.map((spec) => [spec.name, spec]));

export function optionSpec(name: OptionName): OptionSpec {
  // The map holds every OptionName.
  return BY_NAME.get(name)!;
}

export function isOptionName(text: string): text is OptionName {
  return BY_NAME.has(text);
}

/** How the option is written on the command line: `--name`, or `-c` for a short form. */
export function spelling(name: string): string {
  return name.length === 1 ? `-${name}` : `--${name}`;
}
