import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CommandLine, helpText, parseCommandLine } from '../../src/cli/command_line';
import { CommandLineSyntaxError, OptionsError } from '../../src/cli/errors';
import { CONCURRENCY_CPUSET_WARNING } from '../../src/cli/option_rules';
import { OPTION_TABLE } from '../../src/cli/option_table';
import type { Options } from '../../src/cli/options';
import { COMMAND_LINE_ERRORS, OPTION_CASES, TEST_HOST } from '../helpers/cli_option_cases';

function parse(argv: readonly string[], env: Record<string, string> = {}): CommandLine {
  return parseCommandLine(argv, { ...TEST_HOST, env });
}

function run(argv: readonly string[], env: Record<string, string> = {}): { options: Options; warnings: readonly string[] } {
  const parsed = parse(argv, env);
  assert.equal(parsed.kind, 'run', `${argv.join(' ')} should run`);
  return parsed as Extract<CommandLine, { kind: 'run' }>;
}

function pick(options: Options, fields: object): Partial<Options> {
  return Object.fromEntries(Object.keys(fields).map((key) => [key, options[key as keyof Options]]));
}

test('the case table covers every option of the option table', () => {
  const covered = new Set(OPTION_CASES.map((row) => row.option));
  for (const spec of OPTION_TABLE) {
    assert.ok(covered.has(`--${spec.name}`), `no case for --${spec.name}`);
    if ('short' in spec) assert.ok(covered.has(`-${spec.short}`), `no case for -${spec.short}`);
  }
});

test('every option has its default when absent', () => {
  const { options, warnings } = run([]);
  assert.deepEqual(warnings, []);
  for (const row of OPTION_CASES) assert.deepEqual(pick(options, row.defaults), row.defaults, row.option);
});

test('every option takes a valid value', () => {
  for (const row of OPTION_CASES) {
    const parsed = parse(row.valid.argv);
    if (parsed.kind !== 'run') {
      // --help and --version answer before any rule.
      assert.deepEqual({ [parsed.kind]: true }, row.valid.expect, row.option);
      continue;
    }
    assert.deepEqual(pick(parsed.options, row.valid.expect), row.valid.expect, row.option);
    assert.deepEqual(parsed.warnings, row.valid.warnings ?? [], row.option);
  }
});

test('every invalid use fails with its exact message', () => {
  const rows = [...OPTION_CASES.flatMap((row) => row.invalid), ...COMMAND_LINE_ERRORS];
  for (const { argv, stderr } of rows) {
    assert.throws(
      () => parse(argv),
      (error: unknown) => {
        assert.ok(error instanceof CommandLineSyntaxError || error instanceof OptionsError, argv.join(' '));
        assert.equal(`${error.message}\n`, stderr, argv.join(' '));
        return true;
      },
    );
  }
});

test('--restart-epoch defaults to $RESTART_EPOCH, and the option wins over it', () => {
  assert.equal(run([], { RESTART_EPOCH: '4' }).options.restartEpoch, 4);
  assert.equal(run(['--restart-epoch', '2'], { RESTART_EPOCH: '4' }).options.restartEpoch, 2);
  assert.throws(() => parse([], { RESTART_EPOCH: 'later' }), { message: /--restart-epoch -- Couldn't read argument value from string 'later'/ });
  // A dynamic base id is fine on epoch 0, however it was given.
  assert.equal(run(['--use-dynamic-base-id'], { RESTART_EPOCH: '0' }).options.useDynamicBaseId, true);
  assert.throws(() => parse(['--use-dynamic-base-id'], { RESTART_EPOCH: '1' }), {
    message: 'error: cannot use --restart-epoch=1 with --use-dynamic-base-id',
  });
});

test('--concurrency wins over --cpuset-threads, with Envoy\'s warning', () => {
  const { options, warnings } = run(['--concurrency', '3', '--cpuset-threads']);
  assert.equal(options.concurrency, 3);
  assert.equal(options.cpusetThreads, true);
  assert.deepEqual(warnings, [CONCURRENCY_CPUSET_WARNING]);
  assert.equal(run(['--concurrency', '6']).options.concurrency, 6);
  // A host that reports no CPU still runs one worker.
  const noCpu = parseCommandLine([], { ...TEST_HOST, hardwareThreads: () => 0 });
  assert.equal(noCpu.kind === 'run' ? noCpu.options.concurrency : undefined, 1);
});

test('type errors are reported before rule errors, as TCLAP parses before Envoy checks', () => {
  assert.throws(() => parse(['--mode', 'x', '--base-id', 'y']), CommandLineSyntaxError);
  assert.throws(() => parse(['--mode', 'x', '--drain-strategy', 'y']), { message: "error: unknown mode 'x'" });
});

test('--help and --version answer without checking the other values', () => {
  assert.equal(parse(['--mode', 'x', '--version']).kind, 'version');
  assert.equal(parse(['--drain-strategy', 'x', '-h']).kind, 'help');
  // An unknown option is still an error: the command line did not parse.
  assert.throws(() => parse(['--version', '--bogus']), CommandLineSyntaxError);
});

test('an option given twice keeps its last value', () => {
  assert.equal(run(['--concurrency', '1', '--concurrency', '2']).options.concurrency, 2);
  assert.equal(run(['-l', 'debug', '--log-level', 'error']).options.logLevel, 'error');
});

test('the parsed options are frozen plain data', () => {
  const { options } = run(['--component-log-level', 'http:debug', '--disable-extensions', 'a/b']);
  assert.ok(Object.isFrozen(options));
  assert.ok(Object.isFrozen(options.componentLogLevels));
  assert.ok(Object.isFrozen(options.disabledExtensions));
  assert.deepEqual(structuredClone(options), options);
});

test('--help lists every option with its short form and default', async () => {
  const text = await helpText();
  for (const spec of OPTION_TABLE) assert.match(text, new RegExp(`--${spec.name}\\b`), spec.name);
  assert.match(text, /-c, --config-path/);
  assert.match(text, /-l, --log-level .*\[default: info\]/);
});
