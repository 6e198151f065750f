/**
 * --log-format-escaped: C-style escaping of a formatted line so that one entry never spans
 * lines. As in Envoy 1.16 the whole line is escaped except its trailing whitespace, which
 * keeps the end-of-line (and any whitespace the message ended with) as it is. Other control
 * characters become `\xNN` (Envoy's absl::CEscape writes octal); non-ASCII text is kept.
 */
const ESCAPABLE = /[\x00-\x1f\x7f"'\\]/g;

const NAMED_ESCAPES: Readonly<Record<string, string>> = {
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '"': '\\"',
  "'": "\\'",
  '\\': '\\\\',
};

export function escapeLogLine(line: string): string {
  const end = trailingWhitespaceStart(line);
  const body = line.slice(0, end);
  const escaped = body.replace(ESCAPABLE, escapeCharacter);
  return escaped === body ? line : escaped + line.slice(end);
}

function escapeCharacter(character: string): string {
  return NAMED_ESCAPES[character] ?? `\\x${character.charCodeAt(0).toString(16).padStart(2, '0')}`;
}

/** Index where the run of trailing ASCII whitespace (absl::ascii_isspace) begins. */
function trailingWhitespaceStart(line: string): number {
  let end = line.length;
  while (end > 0 && isAsciiSpace(line.charCodeAt(end - 1))) end--;
  return end;
}

function isAsciiSpace(code: number): boolean {
  return code === 0x20 || (code >= 0x09 && code <= 0x0d);
}
