// Reads a core.v3.DataSource: a file, read whenever the context is (re)built, or bytes from
// the configuration itself.

import { readFileSync } from 'node:fs';
import { FieldError } from '../config/errors';
import type { DataSource } from '../config/model';

/** What /certs prints as a certificate's `path`: the file, or Envoy's `<inline>`. */
export function dataSourceName(source: DataSource): string {
  return source.kind === 'file' ? source.path : '<inline>';
}

/** @throws FieldError at '' (the caller places it) when the file cannot be read */
export function readDataSource(source: DataSource): Buffer {
  if (source.kind === 'inline') return source.bytes;
  try {
    return readFileSync(source.path);
  } catch (e) {
    throw new FieldError('', `cannot read '${source.path}': ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
}
