// Case folding as Envoy does it for matchers (absl::AsciiStrToLower): A-Z only.
// String.prototype.toLowerCase folds every script, and in a byte string (src/common/byte_string.ts)
// it would turn one byte into another (c3, a UTF-8 lead byte read as Ã, into e3).

import { isAscii } from './byte_string';

const UPPER = /[A-Z]+/g;

/** `text` with A-Z lower-cased and everything else as it is. */
export function asciiLowerCase(text: string): string {
  // toLowerCase is native and equal on ASCII, the text of nearly every call.
  return isAscii(text) ? text.toLowerCase() : text.replace(UPPER, (run) => run.toLowerCase());
}
