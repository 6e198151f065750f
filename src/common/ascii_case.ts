// Case folding as Envoy does it for matchers and host names (absl::AsciiStrToLower): A-Z only.
// String.prototype.toLowerCase folds every script, and in a byte string (src/common/byte_string.ts)
// it would turn one byte into another (c3, a UTF-8 lead byte read as Ã, into e3).

const NON_ASCII = /[^\x00-\x7f]/;
const UPPER = /[A-Z]+/g;

/** `text` with A-Z lower-cased and everything else as it is. */
export function asciiLowerCase(text: string): string {
  // toLowerCase is native and equal on ASCII, the text of nearly every call.
  return NON_ASCII.test(text) ? text.replace(UPPER, (run) => run.toLowerCase()) : text.toLowerCase();
}
