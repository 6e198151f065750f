// http_protocol_options.header_key_format: how the HTTP/1 codec spells the header names it
// writes. Header names are case-insensitive, but some old peers are not; proper_case_words
// writes them as Envoy's ProperCaseHeaderKeyFormatter does.

const CR_LF = '\r\n';

/**
 * `x-forwarded-for` becomes `X-Forwarded-For`: the first character and every letter after a
 * character that is neither a letter nor a digit are upper-cased; the rest is left as it is.
 */
export function properCaseHeaderKey(name: string): string {
  let out = '';
  let capitalize = true;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    const lower = c >= 0x61 && c <= 0x7a;
    out += capitalize && lower ? String.fromCharCode(c - 0x20) : name[i];
    capitalize = !(lower || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39));
  }
  return out;
}

/**
 * A message head as written (start line, then `name: value` lines, each ending with CRLF) with
 * every header name proper-cased; values, which may hold colons, are left as they are.
 */
export function properCaseHead(head: string): string {
  let pos = head.indexOf(CR_LF) + 2;
  let out = head.slice(0, pos);
  while (pos < head.length) {
    const colon = head.indexOf(':', pos);
    const eol = head.indexOf(CR_LF, pos);
    // The blank line that ends the head, or a line without a colon: written as it is.
    if (colon < 0 || eol < 0 || colon > eol) {
      out += head.slice(pos);
      break;
    }
    out += properCaseHeaderKey(head.slice(pos, colon)) + head.slice(colon, eol + 2);
    pos = eol + 2;
  }
  return out;
}
