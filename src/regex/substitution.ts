// Envoy's RegexMatchAndSubstitute compiled: every match of an RE2 pattern replaced by a rewrite
// string (`\1`: a capture group), as RE2::GlobalReplace does it, over a path's bytes. Built once per route.

import { utf8Bytes, utf8Text } from '../common/byte_string';
import { parseRewrite, type RewritePiece } from './rewrite';
import { SafeRegex } from './safe_regex';

export class Substitution {
  private constructor(
    private readonly regex: SafeRegex,
    private readonly rewrite: readonly RewritePiece[],
  ) {}

  /**
   * @param pattern validated already (program size included)
   * @throws InvalidRegexError, InvalidRewriteError
   */
  static compile(pattern: string, substitution: string): Substitution {
    const regex = SafeRegex.compile(pattern);
    return new Substitution(regex, parseRewrite(substitution, regex.capturingGroups));
  }

  /**
   * `input`, a byte string (a path), read as UTF-8 as RE2 reads it, rewritten, and returned as
   * UTF-8 bytes. A byte no UTF-8 takes comes back as U+FFFD's three; RE2 would copy it.
   */
  apply(input: string): string {
    return utf8Bytes(this.regex.replaceAll(utf8Text(input), this.rewrite));
  }
}
