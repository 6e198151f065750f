/**
 * Errors raised while reading the logging options. Their messages are Envoy's, word for word,
 * because the command line prints them as they are and exits 1.
 */
export abstract class LogOptionError extends Error {}

export class InvalidLogLevelError extends LogOptionError {
  override readonly name = 'InvalidLogLevelError';

  constructor(readonly level: string) {
    super(`error: invalid log level specified '${level}'`);
  }
}

/** A --component-log-level entry that is not exactly `<component>:<level>`. */
export class ComponentLogLevelSyntaxError extends LogOptionError {
  override readonly name = 'ComponentLogLevelSyntaxError';

  constructor(readonly entry: string) {
    super(`error: component log level not correctly specified '${entry}'`);
  }
}

export class InvalidComponentError extends LogOptionError {
  override readonly name = 'InvalidComponentError';

  constructor(readonly component: string) {
    super(`error: invalid component specified '${component}'`);
  }
}
