// Envoy's safe_regex: RE2 syntax and linear-time matching, for every regex taken from config or
// admin input (with a backtracking RegExp, `(\w+)+!` holds the event loop for hours). The engine is
// re2js, the pure-JS port of RE2: one 0.9 MB package, no build. bench/regex_engines.ts, 300,000
// stat names: re2js 30-215 ms a pass, 50-200 us a compile; native `re2` 340-810 ms, 5-18 us (and a
// 2 min node-gyp build, 23 packages, 113 MB); re2-wasm 0.9-2.7 s, 300-850 us.

import { RE2JS, RE2JSSyntaxException } from 're2js';
import { oneLine } from '../config/errors';
import type { RewritePiece } from './rewrite';

/** A pattern the engine refuses, or whose program is larger than allowed. */
export class InvalidRegexError extends Error {
  override readonly name = 'InvalidRegexError';

  /** @param reason one line, e.g. `missing closing )` */
  constructor(
    readonly pattern: string,
    readonly reason: string,
  ) {
    super(`invalid regex ${JSON.stringify(pattern)}: ${reason}`);
  }
}

export interface SafeRegexOptions {
  /**
   * Envoy's google_re2.max_program_size (100 by default for config regexes; none here). The size
   * is re2js's instruction count: within a few of C++ RE2's ProgramSize for ASCII literals and
   * classes, far lower where RE2 expands `.` or a Unicode class to UTF-8 bytes (`.{30}`: 32, 244).
   */
  readonly maxProgramSize?: number;
}

export class SafeRegex {
  private constructor(
    readonly pattern: string,
    private readonly compiled: RE2JS,
  ) {}

  /** @throws InvalidRegexError for RE2-invalid syntax (backreferences, lookaround, ...) or size */
  static compile(pattern: string, options: SafeRegexOptions = {}): SafeRegex {
    let compiled: RE2JS;
    try {
      compiled = RE2JS.compile(pattern);
    } catch (e) {
      if (e instanceof RE2JSSyntaxException) throw new InvalidRegexError(pattern, syntaxReason(e, pattern));
      throw e;
    }
    const max = options.maxProgramSize;
    const size = compiled.programSize();
    if (max !== undefined && size > max) {
      throw new InvalidRegexError(pattern, `program size of ${size} > max program size of ${max}`);
    }
    return new SafeRegex(pattern, compiled);
  }

  /** A match anywhere in the input (RE2::PartialMatch; Envoy's /stats filter). */
  search(input: string): boolean {
    return this.compiled.test(input);
  }

  /** A match of the whole input (RE2::FullMatch; Envoy's safe_regex matchers). */
  fullMatch(input: string): boolean {
    return this.compiled.testExact(input);
  }

  /** The pattern's capturing groups. */
  get capturingGroups(): number {
    return this.compiled.groupCount();
  }

  /** Every non-overlapping match replaced by `rewrite` (RE2::GlobalReplace); the input when none. */
  replaceAll(input: string, rewrite: readonly RewritePiece[]): string {
    const matcher = this.compiled.matcher(input);
    let out = '';
    let copied = 0;
    while (matcher.find()) {
      out += input.slice(copied, matcher.start());
      for (const piece of rewrite) out += typeof piece === 'string' ? piece : (matcher.group(piece) ?? '');
      copied = matcher.end();
    }
    return out + input.slice(copied);
  }
}

/** The engine's description, plus the offending part when it names one short of the whole pattern. */
function syntaxReason(e: RE2JSSyntaxException, pattern: string): string {
  const part = e.getPattern();
  return oneLine(part == null || part === pattern ? e.getDescription() : `${e.getDescription()}: ${part}`);
}
