// A direct response's body from its file, read once when the route table is built, as Envoy reads
// it when the route configuration loads: at most 4 KiB (Envoy's max_direct_response_body_size_bytes
// default), and text, since local replies are sent as text.

import * as fs from 'node:fs';
import { FieldError } from '../../config/errors';

const MAX_BODY_BYTES = 4096;

/** @throws FieldError (path '') for a file that cannot be read, is too large or is not UTF-8 */
export function readDirectResponseBody(filename: string): string {
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(filename);
  } catch (error) {
    throw new FieldError('', `cannot read '${filename}': ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  if (bytes.length > MAX_BODY_BYTES) throw new FieldError('', `response body size is ${bytes.length} bytes; maximum is ${MAX_BODY_BYTES}`);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new FieldError('', `'${filename}' is not UTF-8 text (this build sends direct response bodies as text)`);
  }
}
