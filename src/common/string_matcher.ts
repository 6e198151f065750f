// Envoy's StringMatcher as a predicate: exact, prefix, suffix, contains (each optionally case
// insensitive, A-Z only, as Envoy folds) or an RE2 regex matched against the whole input.

import type { StringMatch } from '../config/model';
import { SafeRegex } from '../regex/safe_regex';
import { asciiLowerCase } from './ascii_case';
import { utf8Bytes, utf8Text } from './byte_string';

export function stringMatcher(m: StringMatch): (value: string) => boolean {
  const wanted = m.ignoreCase ? asciiLowerCase(m.value) : m.value;
  const fold = m.ignoreCase ? asciiLowerCase : (name: string) => name;
  switch (m.kind) {
    case 'exact':
      return (name) => fold(name) === wanted;
    case 'prefix':
      return (name) => fold(name).startsWith(wanted);
    case 'suffix':
      return (name) => fold(name).endsWith(wanted);
    case 'contains':
      return (name) => fold(name).includes(wanted);
    case 'safe_regex': {
      const regex = SafeRegex.compile(m.value);
      return (name) => regex.fullMatch(name);
    }
  }
}

/**
 * The same for values read off the wire, byte strings (src/common/byte_string.ts): the
 * configuration's text compared as its UTF-8 bytes, a regex run over the value read as UTF-8.
 */
export function byteStringMatcher(m: StringMatch): (value: string) => boolean {
  if (m.kind !== 'safe_regex') return stringMatcher({ ...m, value: utf8Bytes(m.value) });
  const test = stringMatcher(m);
  return (value) => test(utf8Text(value));
}
