// The end of a chunked HTTP/1.1 body (RFC 9112 section 7.1), for both directions.

/** The last chunk of a body without trailers. */
export const LAST_CHUNK = '0\r\n\r\n';

/** The last chunk, then `trailers` ([name, value, ...]) as a trailer section. */
export function lastChunkWith(trailers: readonly string[]): string {
  let text = '0\r\n';
  for (let i = 0; i < trailers.length; i += 2) text += `${trailers[i]}: ${trailers[i + 1]}\r\n`;
  return `${text}\r\n`;
}
