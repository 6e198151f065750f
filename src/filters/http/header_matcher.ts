// Envoy 1.16's HeaderUtility::matchHeaders: a request matches a list of HeaderMatchers when it
// matches every one. A matcher looks at the first value of its header (1.16 does not join
// repeated headers); a missing header matches only an inverted present_match. Header values are
// byte strings (src/common/byte_string.ts): the configuration's text is compared as its UTF-8
// bytes, and a regex reads the value as UTF-8, as RE2 does in Envoy.

import { utf8Bytes, utf8Text } from '../../common/byte_string';
import type { HeaderMatch } from '../../config/model';
import { firstHeaderValue, type RequestHead } from '../../http/message';
import { SafeRegex } from '../../regex/safe_regex';

/** absl::SimpleAtoi's int64 syntax: surrounding whitespace, one optional sign, digits. */
const INT64_TEXT = /^\s*[+-]?\d+\s*$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

type Test = (value: string) => boolean;

export class HeaderMatcher {
  private readonly test: Test | null;

  constructor(readonly config: HeaderMatch) {
    this.test = compile(config.specifier);
  }

  matches(head: RequestHead): boolean {
    const value = headerValue(head, this.config.name);
    if (value === undefined) return this.config.invert && this.test === null;
    // present_match (test null) matches any value.
    const match = this.test === null || this.test(value);
    return match !== this.config.invert;
  }
}

/** Every matcher matches `head` (an empty list matches every request). */
export function matchAll(matchers: readonly HeaderMatcher[], head: RequestHead): boolean {
  for (const matcher of matchers) if (!matcher.matches(head)) return false;
  return true;
}

function compile(specifier: HeaderMatch['specifier']): Test | null {
  switch (specifier.kind) {
    case 'present':
      return null;
    case 'exact': {
      const expected = utf8Bytes(specifier.value);
      // Envoy: an empty exact_match matches any value.
      return expected === '' ? () => true : (value) => value === expected;
    }
    case 'prefix': {
      const prefix = utf8Bytes(specifier.value);
      return (value) => value.startsWith(prefix);
    }
    case 'suffix': {
      const suffix = utf8Bytes(specifier.value);
      return (value) => value.endsWith(suffix);
    }
    case 'safe_regex': {
      // Validated when the configuration was loaded (program size included).
      const regex = SafeRegex.compile(specifier.regex);
      return (value) => regex.fullMatch(utf8Text(value));
    }
    case 'range': {
      const start = BigInt(specifier.start);
      const end = BigInt(specifier.end);
      return (value) => {
        if (!INT64_TEXT.test(value)) return false;
        const n = BigInt(value.trim());
        return n >= INT64_MIN && n <= INT64_MAX && n >= start && n < end;
      };
    }
  }
}

/** The first value of `name` in the request; the pseudo-headers name the request line and host. */
export function headerValue(head: RequestHead, name: string): string | undefined {
  switch (name) {
    case ':path':
      return head.path;
    case ':method':
      return head.method;
    case ':authority':
      return head.authority === '' ? undefined : head.authority;
  }
  return firstHeaderValue(head.headers, name);
}
