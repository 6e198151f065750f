// Configuration errors. Every message is one line, `<source>: <field path>: <reason>`, so that
// validate mode and the start-up log can print it as is and an operator can find the field.

import { joinPath } from './field_path';

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
export function oneLine(text: string): string {
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

/** A key the schema does not know, refused (Envoy's UnknownProtoFieldException). */
export class UnknownFieldError extends FieldError {
  constructor(fieldPath: string) {
    super(fieldPath, 'unknown field');
  }
}

/**
 * Runs a stage that works on the message at `path` (a constructor given a part of the model),
 * placing the FieldErrors it raises, whose paths are relative to that message, below `path`.
 */
export function atField<T>(path: string, stage: () => T): T {
  try {
    return stage();
  } catch (e) {
    if (e instanceof FieldErrors) throw new FieldErrors(e.all.map((f) => new FieldError(joinPath(path, f.fieldPath), f.reason)));
    if (e instanceof FieldError) throw new FieldError(joinPath(path, e.fieldPath), e.reason);
    throw e;
  }
}

/** Several invalid fields of one configuration; validate mode prints each. */
export class ConfigErrors extends ConfigError {
  constructor(readonly all: readonly ConfigError[]) {
    super(all[0]!.file, all[0]!.fieldPath, all[0]!.reason);
  }
}

/** Runs a stage on the configuration of `file`, reporting its FieldError(s) as ConfigError(s) of that file. */
export function inConfigFile<T>(file: string, stage: () => T): T {
  try {
    return stage();
  } catch (e) {
    throw asConfigFileError(file, e);
  }
}

/** A FieldError (or FieldErrors) of `file`'s configuration as ConfigError(s) of that file; anything else as it is. */
export function asConfigFileError(file: string, e: unknown): unknown {
  if (e instanceof FieldErrors) return new ConfigErrors(e.all.map((f) => new ConfigError(file, f.fieldPath, f.reason)));
  if (e instanceof FieldError) return new ConfigError(file, e.fieldPath, e.reason);
  return e;
}

/** Several FieldErrors found by checks that went on after the first (one per resource). */
export class FieldErrors extends FieldError {
  constructor(readonly all: readonly FieldError[]) {
    super(all[0]!.fieldPath, all[0]!.reason);
  }
}

/**
 * Runs independent checks (one per cluster, per listener, ...) past the first failure, so that
 * an operator sees every broken resource at once; each check still stops at its own first error.
 */
export class FieldErrorCollector {
  private readonly errors: FieldError[] = [];

  run(check: () => void): void {
    try {
      check();
    } catch (e) {
      if (e instanceof FieldErrors) this.errors.push(...e.all);
      else if (e instanceof FieldError) this.errors.push(e);
      else throw e;
    }
  }

  /** Throws what was collected: the one FieldError, or FieldErrors for several. */
  throwIfAny(): void {
    if (this.errors.length === 1) throw this.errors[0];
    if (this.errors.length > 1) throw new FieldErrors(this.errors);
  }
}
