// Tokens of a comma-separated header value (Envoy's StringUtil::findToken and caseFindToken):
// elements trimmed of spaces and tabs, empty ones skipped. Pure.

/** Whether `value` lists `token`; `ignoreCase` compares as caseFindToken does. */
export function listHasToken(value: string, token: string, ignoreCase: boolean): boolean {
  const wanted = ignoreCase ? token.toLowerCase() : token;
  for (const element of value.split(',')) {
    const trimmed = element.replace(/^[ \t]+|[ \t]+$/g, '');
    if ((ignoreCase ? trimmed.toLowerCase() : trimmed) === wanted) return true;
  }
  return false;
}
