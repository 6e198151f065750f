// argv -> the options given (yargs, configured from the option table), with TCLAP's checks:
// an unknown option or a stray argument, a missing value, and a value for a flag are errors
// naming the argument. An option given twice keeps its last value (TCLAP refuses it; wrappers
// that append to a base command line rely on it). --help and --version answer before any rule.

import type { Options as YargsOption } from 'yargs';
import yargs from 'yargs/yargs';
import { CommandLineSyntaxError } from './errors';
import { GivenOptions, Host, resolveOptions, ResolvedOptions } from './option_rules';
import { isOptionName, OPTION_TABLE, OptionName, spelling } from './option_table';

export type CommandLine =
  | { readonly kind: 'help' }
  | { readonly kind: 'version' }
  | ({ readonly kind: 'run' } & ResolvedOptions);

/** @throws CommandLineSyntaxError, OptionsError */
export function parseCommandLine(argv: readonly string[], host: Host): CommandLine {
  const given = givenOptions(argv);
  if (given.get('help') === true) return { kind: 'help' };
  if (given.get('version') === true) return { kind: 'version' };
  return { kind: 'run', ...resolveOptions(given, host) };
}

/** The usage text of --help, generated from the option table. */
export function helpText(): Promise<string> {
  return parser([]).getHelp();
}

const MISSING_VALUE = /^Not enough arguments following: (.+)$/;

function givenOptions(argv: readonly string[]): GivenOptions {
  let failure: string | null = null;
  const parsed = parser(argv)
    .fail((message, error) => {
      failure = error?.message ?? message;
    })
    .parseSync();
  if (failure !== null) {
    const missing = MISSING_VALUE.exec(failure);
    throw missing === null
      ? new CommandLineSyntaxError('(command line)', failure)
      : new CommandLineSyntaxError(spelling(missing[1]), 'Missing a value for this argument!');
  }
  const [stray] = parsed._;
  if (stray !== undefined) throw new CommandLineSyntaxError(String(stray), "Couldn't find match for argument");

  const given = new Map<OptionName, string | true>();
  for (const [key, value] of Object.entries(parsed)) {
    if (key === '_' || key === '$0' || value === undefined) continue;
    if (!isOptionName(key)) throw new CommandLineSyntaxError(spelling(key), "Couldn't find match for argument");
    if (value === false) throw new CommandLineSyntaxError(spelling(key), 'A flag takes no value');
    given.set(key, value === true ? true : String(value));
  }
  return given;
}

function parser(argv: readonly string[]) {
  const options: Record<string, YargsOption> = {};
  for (const spec of OPTION_TABLE) {
    options[spec.name] = {
      ...('short' in spec ? { alias: spec.short } : {}),
      describe: spec.describe,
      ...(spec.kind === 'flag'
        ? { type: 'boolean' }
        : { type: 'string', requiresArg: true, ...('default' in spec ? { defaultDescription: show(spec.default) } : {}) }),
    };
  }
  return yargs([...argv])
    .scriptName('proxy')
    // Missing-value errors are recognized by yargs' English text, which LANG would translate.
    .locale('en')
    .usage('USAGE: proxy [options]')
    .version(false)
    .help(false)
    .exitProcess(false)
    .wrap(null)
    .parserConfiguration({
      'camel-case-expansion': false,
      'strip-aliased': true,
      'duplicate-arguments-array': false,
      'boolean-negation': false,
      'dot-notation': false,
      'short-option-groups': false,
      'parse-numbers': false,
      'parse-positional-numbers': false,
    })
    .options(options);
}

function show(value: string): string {
  return value === '' ? "''" : value;
}
