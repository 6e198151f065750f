// Envoy's RegexMatchAndSubstitute compiled: every match of an RE2 pattern replaced by a rewrite
// string (`\1`: a capture group), as RE2::GlobalReplace does it. Built once per route.

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

  apply(input: string): string {
    return this.regex.replaceAll(input, this.rewrite);
  }
}
