// argv -> the options given (yargs' parser, configured from the option table), with TCLAP's
// checks: an unknown option or a stray argument, a missing value, and a value for a flag are
// errors naming the argument. An option given twice keeps its last value (TCLAP refuses it;
// wrappers that append to a base command line rely on it). --help and --version answer before
// any rule.

import type { Options as YargsOption } from 'yargs';
import yargsParser from 'yargs-parser';
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

/**
 * The usage text of --help, generated from the option table by yargs, which only --help loads:
 * it is 60 ms of every start, where the parser it wraps is a sixth of that.
 */
export function helpText(): Promise<string> {
  // Node's require of this ES module gives its 'module.exports' export; the bundle's, its namespace.
  const loaded = require('yargs/yargs') as typeof import('yargs/yargs') | { default: typeof import('yargs/yargs') };
  const yargs = typeof loaded === 'function' ? loaded : loaded.default;
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
  return yargs([])
    .scriptName('proxy')
    // English whatever LANG says.
    .locale('en')
    .usage('USAGE: proxy [options]')
    .version(false)
    .help(false)
    .exitProcess(false)
    .wrap(null)
    .parserConfiguration(PARSER_CONFIGURATION)
    .options(options)
    .getHelp();
}

const MISSING_VALUE = /^Not enough arguments following: (.+)$/;

function givenOptions(argv: readonly string[]): GivenOptions {
  const { argv: parsed, error } = yargsParser.detailed([...argv], parserOptions());
  if (error !== null) {
    const failure = error.message;
    const missing = MISSING_VALUE.exec(failure);
    throw missing === null
      ? new CommandLineSyntaxError('(command line)', failure)
      : new CommandLineSyntaxError(spelling(missing[1]), 'Missing a value for this argument!');
  }
  const [stray] = parsed._;
  if (stray !== undefined) throw new CommandLineSyntaxError(String(stray), "Couldn't find match for argument");

  const given = new Map<OptionName, string | true>();
  for (const [key, value] of Object.entries(parsed)) {
    if (key === '_' || value === undefined) continue;
    if (!isOptionName(key)) throw new CommandLineSyntaxError(spelling(key), "Couldn't find match for argument");
    if (value === false) throw new CommandLineSyntaxError(spelling(key), 'A flag takes no value');
    given.set(key, value === true ? true : String(value));
  }
  return given;
}

/** TCLAP's reading: names as written (no camel case, dots or negation), -c never a group of flags, values as text. */
const PARSER_CONFIGURATION = {
  'camel-case-expansion': false,
  'strip-aliased': true,
  'duplicate-arguments-array': false,
  'boolean-negation': false,
  'dot-notation': false,
  'short-option-groups': false,
  'parse-numbers': false,
  'parse-positional-numbers': false,
} as const;

/**
 * The option table as yargs hands it to its parser (helpText's options): `requiresArg` is an
 * `narg` of NaN, one value that must be there, else "Not enough arguments following".
 */
function parserOptions(): yargsParser.Options {
  return {
    alias: Object.fromEntries(OPTION_TABLE.flatMap((spec) => ('short' in spec ? [[spec.name, [spec.short]]] : []))),
    boolean: OPTION_TABLE.flatMap((spec) => (spec.kind === 'flag' ? [spec.name] : [])),
    string: OPTION_TABLE.flatMap((spec) => (spec.kind === 'value' ? [spec.name] : [])),
    narg: Object.fromEntries(OPTION_TABLE.flatMap((spec) => (spec.kind === 'value' ? [[spec.name, NaN]] : []))),
    configuration: PARSER_CONFIGURATION,
  };
}

function show(value: string): string {
  return value === '' ? "''" : value;
}
