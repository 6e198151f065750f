// http_protocol_options.header_key_format: how an HTTP/1 codec spells the header names it writes.
// Header maps hold names in lower case; some HTTP/1 peers insist on another spelling.

/**
 * Envoy's ProperCaseHeaderKeyFormatter: the first letter of the name and each letter that
 * follows a character other than a letter or digit go upper case; the rest is left as it is.
 */
export function properCaseHeaderKey(name: string): string {
  let out = '';
  let capitalize = true;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    const lower = c >= 0x61 && c <= 0x7a;
    const alphanumeric = lower || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39);
    out += capitalize && lower ? String.fromCharCode(c - 0x20) : name[i];
    capitalize = !alphanumeric;
  }
  return out;
}
