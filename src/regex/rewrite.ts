// RE2's rewrite strings, as Envoy's RegexMatchAndSubstitute uses them (RE2::GlobalReplace): `\0`
// to `\9` insert a capture group (0: the whole match), `\\` a backslash; any other backslash, or
// a group the pattern does not have, is refused as RE2::CheckRewriteString refuses it. Pure.

/** Literal text, or the number of a capture group. */
export type RewritePiece = string | number;

export class InvalidRewriteError extends Error {
  override readonly name = 'InvalidRewriteError';
}

/** @throws InvalidRewriteError in RE2's words */
export function parseRewrite(rewrite: string, capturingGroups: number): RewritePiece[] {
  const pieces: RewritePiece[] = [];
  let literal = '';
  let most = 0;
  for (let i = 0; i < rewrite.length; i++) {
    const c = rewrite[i]!;
    if (c !== '\\') {
      literal += c;
      continue;
    }
    if (++i === rewrite.length) throw new InvalidRewriteError("Rewrite schema error: '\\' not allowed at end.");
    const next = rewrite[i]!;
    if (next === '\\') {
      literal += '\\';
      continue;
    }
    if (next < '0' || next > '9') throw new InvalidRewriteError("Rewrite schema error: '\\' must be followed by a digit or '\\'.");
    if (literal !== '') pieces.push(literal);
    literal = '';
    const group = Number(next);
    most = Math.max(most, group);
    pieces.push(group);
  }
  if (literal !== '') pieces.push(literal);
  if (most > capturingGroups) {
    throw new InvalidRewriteError(`Rewrite schema requests ${most} matches, but the regexp only has ${capturingGroups} parenthesized subexpressions.`);
  }
  return pieces;
}
