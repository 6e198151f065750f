// A violation of HTTP/1.1 framing or syntax. On the downstream side it becomes a local reply
// with `status` and the connection closes; on the upstream side it resets the request.

export class CodecError extends Error {
  constructor(
    /** The status a server answers with: 400, 426, 431 or 501. */
    readonly status: number,
    /** Envoy-style response code details, e.g. `http1.invalid_transfer_encoding`. */
    readonly details: string,
  ) {
    super(`HTTP/1 codec error: ${details}`);
    this.name = 'CodecError';
  }
}
