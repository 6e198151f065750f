// Envoy's StringMatcher as a predicate: exact, prefix, suffix, contains (each optionally case
// insensitive) or an RE2 regex matched against the whole input.

import type { StringMatch } from '../config/model';
import { SafeRegex } from '../regex/safe_regex';

export function stringMatcher(m: StringMatch): (value: string) => boolean {
  const wanted = m.ignoreCase ? m.value.toLowerCase() : m.value;
  const fold = (name: string) => (m.ignoreCase ? name.toLowerCase() : name);
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
