// The admin's bearer tokens: read from their files once, kept only as SHA-256 digests, and
// compared in constant time. No error message, log line or dump ever holds a token: an error
// names the file and what is wrong with its content.

import { createHash, timingSafeEqual } from 'node:crypto';
import * as fs from 'node:fs';
import { FieldError } from '../config/errors';
import type { AdminBearerToken } from '../config/model';

/** Shorter is guessable; a generated token (`openssl rand -hex 32`) is far longer. */
const MIN_TOKEN_LENGTH = 16;
/** What an Authorization header value can carry, spaces aside (RFC 9110 visible characters). */
const TOKEN_CHARACTERS = /^[\x21-\x7e]+$/;

interface KnownToken {
  readonly digest: Buffer;
  readonly entry: AdminBearerToken;
}

function digestOf(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

export class BearerTokens {
  private constructor(private readonly known: readonly KnownToken[]) {}

  /**
   * Reads each entry's file. A trailing newline is not part of a token.
   * @throws FieldError at `[i].path` (relative to bearer_tokens)
   */
  static read(entries: readonly AdminBearerToken[]): BearerTokens {
    const known: KnownToken[] = [];
    entries.forEach((entry, i) => {
      const path = `[${i}].path`;
      let token: string;
      try {
        token = fs.readFileSync(entry.path, 'utf8').replace(/\r?\n$/, '');
      } catch (error) {
        throw new FieldError(path, `cannot read the token file: ${(error as Error).message}`);
      }
      if (!TOKEN_CHARACTERS.test(token)) throw new FieldError(path, `${entry.path} must hold one token of visible ASCII characters, without spaces`);
      if (token.length < MIN_TOKEN_LENGTH) throw new FieldError(path, `the token in ${entry.path} is shorter than ${MIN_TOKEN_LENGTH} characters`);
      const digest = digestOf(token);
      const same = known.findIndex((k) => k.digest.equals(digest));
      if (same >= 0) throw new FieldError(path, `${entry.path} holds the same token as bearer_tokens[${same}]`);
      known.push({ digest, entry });
    });
    return new BearerTokens(known);
  }

  get size(): number {
    return this.known.length;
  }

  /** The entry whose token `presented` is, or null. Every known token is compared, each in constant time. */
  match(presented: string): AdminBearerToken | null {
    const digest = digestOf(presented);
    let found: AdminBearerToken | null = null;
    for (const known of this.known) {
      if (timingSafeEqual(known.digest, digest)) found = known.entry;
    }
    return found;
  }
}
