// The binary's answers that end in an exit: every invalid use of every option (exact stderr,
// exit 1), --version, --hot-restart-version, --help, and the errors found after the options.

import assert from 'node:assert/strict';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { readBuildInfo } from '../../src/server/build_info';
import { hotRestartVersion } from '../../src/shared_memory/region_layout';
import { servableV3 } from '../helpers/cli_bootstraps';
import { COMMAND_LINE_ERRORS, OPTION_CASES } from '../helpers/cli_option_cases';
import { mapLimited, runToExit } from '../helpers/cli_runs';
import { makeTempDir } from '../helpers/proxy_process';

const PARALLEL = 2;
let dir = '';

before(() => {
  dir = makeTempDir();
});

after(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

test('every invalid use of every option: its message alone on stderr, exit 1', { timeout: 60000 }, async () => {
  const rows = [...OPTION_CASES.flatMap((row) => row.invalid), ...COMMAND_LINE_ERRORS];
  assert.ok(rows.length > 50);
  const results = await mapLimited(rows, PARALLEL, (row) => runToExit(row.argv));
  rows.forEach((row, i) => {
    const result = results[i]!;
    assert.deepEqual(result, { code: 1, stdout: '', stderr: row.stderr }, row.argv.join(' '));
  });
});

test('--version: five slash-separated fields on stdout, exit 0', { timeout: 20000 }, async () => {
  const build = readBuildInfo();
  const { code, stdout, stderr } = await runToExit(['--version']);
  assert.equal(code, 0);
  assert.equal(stderr, '');
  const match = /^\nproxy {2}version: ([0-9a-f]{40})\/(\d+\.\d+\.\d+(?:-dev)?)\/(Clean|Modified|Distribution)\/(RELEASE|DEBUG)\/(OpenSSL(?:-FIPS)?)\n\n$/.exec(stdout);
  assert.ok(match, JSON.stringify(stdout));
  assert.deepEqual(match.slice(1, 5), [build.revision, build.release ? build.version : `${build.version}-dev`, build.treeStatus, build.buildMode]);
  // The library Node links, -FIPS when FIPS mode is on.
  assert.equal(match[5], crypto.getFips() ? 'OpenSSL-FIPS' : 'OpenSSL');
});

test('--hot-restart-version: the layout string or `disabled` on stderr, no newline, exit 0', { timeout: 20000 }, async () => {
  const [enabled, disabled, badMode] = await mapLimited(
    [['--hot-restart-version'], ['--hot-restart-version', '--disable-hot-restart'], ['--hot-restart-version', '--drain-strategy', 'x']],
    PARALLEL,
    (argv) => runToExit(argv),
  );
  assert.deepEqual(enabled, { code: 0, stdout: '', stderr: hotRestartVersion() });
  assert.deepEqual(disabled, { code: 0, stdout: '', stderr: 'disabled' });
  // Evaluated after every other option.
  assert.deepEqual(badMode, { code: 1, stdout: '', stderr: "error: unknown drain-strategy 'x'\n" });
});

test('--help and -h: the usage of every option on stdout, exit 0', { timeout: 20000 }, async () => {
  const [long, short] = await mapLimited([['--help'], ['-h']], PARALLEL, (argv) => runToExit(argv));
  assert.equal(long!.code, 0);
  assert.equal(long!.stderr, '');
  assert.match(long!.stdout, /^USAGE: proxy \[options\]/);
  for (const row of OPTION_CASES) assert.ok(long!.stdout.includes(row.option), row.option);
  assert.deepEqual(short, long);
  // The locale does not translate it (nor the errors, which are recognized by their text).
  const german = await runToExit(['--help'], { env: { LC_ALL: 'de_DE.UTF-8', LANG: 'de_DE.UTF-8' } });
  assert.deepEqual(german, long);
  const missing = await runToExit(['--base-id', '--concurrency', '2'], { env: { LC_ALL: 'de_DE.UTF-8' } });
  assert.deepEqual(missing, { code: 1, stdout: '', stderr: 'PARSE ERROR: Argument: --base-id -- Missing a value for this argument!\nFor complete USAGE and HELP type: proxy --help\n' });
});

interface ConfigFailure {
  readonly name: string;
  readonly argv: () => string[];
  /** Every line expected on stderr, in any order among the others. */
  readonly stderrIncludes: () => string[];
}

const NO_CONFIG = 'At least one of --config-path or --config-yaml or Options::configProto() should be non-empty';

const CONFIG_FAILURES: readonly ConfigFailure[] = [
  {
    name: 'no configuration at all',
    argv: () => [],
    stderrIncludes: () => [NO_CONFIG, `error initializing configuration '': ${NO_CONFIG}`],
  },
  {
    name: '-c of a missing file',
    argv: () => ['-c', path.join(dir, 'missing.yaml')],
    stderrIncludes: () => {
      const file = path.join(dir, 'missing.yaml');
      return [`error initializing configuration '${file}': ${file}: cannot read the file (ENOENT)`];
    },
  },
  {
    name: '--config-yaml that is not YAML',
    argv: () => ['--config-yaml', '{node: [}'],
    stderrIncludes: () => ['--config-yaml: YAML syntax error at line 1, column 9'],
  },
  {
    name: '--bootstrap-version the proxy does not know',
    argv: () => ['--bootstrap-version', '4', '--config-yaml', '{}'],
    stderrIncludes: () => ["error initializing configuration '': --config-yaml: Unknown bootstrap version 4."],
  },
  {
    name: '--bootstrap-version 3 with a v2 field',
    argv: () => ['--bootstrap-version', '3', '--config-yaml', '{static_resources: {clusters: [{name: a, hosts: []}]}}'],
    stderrIncludes: () => ['--config-yaml: static_resources.clusters[0].hosts: unknown field'],
  },
  {
    name: '--disable-extensions of an extension the configuration uses',
    argv: () => ['-c', path.join(dir, 'servable.json'), '--disable-extensions', 'envoy.filters.network/envoy.filters.network.tcp_proxy'],
    stderrIncludes: () => [
      "static_resources.listeners[0].filter_chains[0].filters[0].name: Didn't find a registered implementation for name: 'proxy.filters.network.tcp_proxy' (disabled by --disable-extensions)",
    ],
  },
  {
    name: 'an unknown bootstrap field without --allow-unknown-static-fields',
    argv: () => ['--config-yaml', '{node: {id: a, colour: blue}}'],
    stderrIncludes: () => ['--config-yaml: node.colour: unknown field'],
  },
  {
    name: '--log-path in a missing directory',
    argv: () => ['--log-path', path.join(dir, 'missing', 'proxy.log'), '--config-yaml', '{}'],
    stderrIncludes: () => {
      const file = path.join(dir, 'missing', 'proxy.log');
      return [`unable to open file '${file}': ENOENT: no such file or directory, open '${file}'`];
    },
  },
  {
    name: '--admin-address-path in a missing directory',
    argv: () => ['-c', path.join(dir, 'servable.json'), '--disable-hot-restart', '--concurrency', '1', '--admin-address-path', path.join(dir, 'missing', 'address')],
    stderrIncludes: () => [`error starting the server: ENOENT: no such file or directory, open '${path.join(dir, 'missing', 'address')}'`],
  },
];

test('errors found after the options: the reason on stderr, exit 1', { timeout: 60000 }, async () => {
  fs.writeFileSync(path.join(dir, 'servable.json'), JSON.stringify(servableV3('/dev/null')));
  const results = await mapLimited(CONFIG_FAILURES, PARALLEL, (row) => runToExit(row.argv()));
  CONFIG_FAILURES.forEach((row, i) => {
    const { code, stdout, stderr } = results[i]!;
    assert.equal(code, 1, row.name);
    assert.equal(stdout, '', row.name);
    for (const expected of row.stderrIncludes()) assert.ok(stderr.includes(expected), `${row.name}: ${JSON.stringify(expected)} not in\n${stderr}`);
  });
});
