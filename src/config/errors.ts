// Configuration errors. Every message is one line, `<source>: <field path>: <reason>`, so that
// validate mode and the start-up log can print it as is and an operator can find the field.

/** An invalid configuration, as reported to the operator. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';

  /**
   * @param file the config path, `--config-yaml` when the problem is in that string, or empty
   *   when there is no configuration at all
   * @param fieldPath e.g. `static_resources.clusters[0].name`; empty when the problem is global
   */
  constructor(
    readonly file: string,
    readonly fieldPath: string,
    readonly reason: string,
  ) {
    super(oneLine([file, fieldPath, reason].filter((part) => part !== '').join(': ')));
  }
}

/** Line breaks quoted from the input (a parser's view of the text) are written as escapes. */
function oneLine(text: string): string {
  return text.replace(/\r/g, '\\r').replace(/\n/g, '\\n');
}

/**
 * A problem at one field, raised by the pure stages (decoding, upgrade, validation) that do not
 * know which file the value came from; the loader turns it into a ConfigError.
 */
export class FieldError extends Error {
  override readonly name = 'FieldError';

  constructor(
    readonly fieldPath: string,
    readonly reason: string,
  ) {
    super(fieldPath === '' ? reason : `${fieldPath}: ${reason}`);
  }
}
