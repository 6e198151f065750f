// Why a command line cannot run. Both print their message to stderr and exit 1, as Envoy does.

/** Shared by every hint line: how the operator finds the valid options. */
export const USAGE_HINT = 'For complete USAGE and HELP type: proxy --help';

/**
 * The command line is not well formed (Envoy's TCLAP parse errors): an unknown option, a
 * missing value, a value that is not of the option's type, an option given twice. One line
 * naming the argument, then the usage hint.
 */
export class CommandLineSyntaxError extends Error {
  override readonly name = 'CommandLineSyntaxError';

  constructor(
    readonly argument: string,
    readonly reason: string,
  ) {
    super(`PARSE ERROR: Argument: ${argument} -- ${reason}\n${USAGE_HINT}`);
  }
}

/** Well formed, but the values break a rule (Envoy's MalformedArgvException), e.g. `error: unknown mode 'x'`. */
export class OptionsError extends Error {
  override readonly name = 'OptionsError';
}
