// The proxy holds what it reads off the wire (header names and values, paths) as byte strings:
// one character per byte, as latin1 decodes them, so that writing them back as latin1 gives the
// same bytes. Text from the configuration or from Node (names, JSON) is Unicode; this is how it
// joins bytes, as Envoy's std::string holds the configuration's UTF-8.

const NON_ASCII = /[^\x00-\x7f]/;

/** Whether every character of `text` is ASCII: text and bytes are then the same. */
export function isAscii(text: string): boolean {
  return !NON_ASCII.test(text);
}

/** `text`'s UTF-8 encoding as a byte string; ASCII text is its own. */
export function utf8Bytes(text: string): string {
  return isAscii(text) ? text : Buffer.from(text, 'utf8').toString('latin1');
}

/** A byte string read as UTF-8, what RE2 sees of the same bytes in Envoy (a byte no UTF-8 takes is U+FFFD); ASCII is its own. */
export function utf8Text(bytes: string): string {
  return isAscii(bytes) ? bytes : Buffer.from(bytes, 'latin1').toString('utf8');
}
