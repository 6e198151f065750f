// A message head: the header map the HTTP layer works on, whichever codec made it. Request
// pseudo-headers (method, path, authority, scheme) and the response status are fields; `headers`
// holds only end-to-end headers. The framing facts (body length, HTTP/1 transfer codings and
// connection tokens) are what the codec learnt from the wire, for the codec on the other side.

/** `MessageHead.bodyLength` for a chunked body. */
export const BODY_CHUNKED = -1;
/** `MessageHead.bodyLength` for a response body that ends when the connection closes. */
export const BODY_UNTIL_CLOSE = -2;

export class MessageHead {
  /** How the body is framed on the wire: a byte count, BODY_CHUNKED or BODY_UNTIL_CLOSE. */
  bodyLength = 0;
  /** End-to-end headers as [name, value, name, value, ...], names in lower case. */
  readonly headers: string[] = [];
  /** The Content-Length header's value, -1 when absent (a HEAD response has one and no body). */
  contentLength = -1;
  /** The last transfer coding is chunked. */
  chunked = false;
  /**
   * The transfer codings applied before chunked (or without it), as received, e.g. `gzip`;
   * null when there are none. The proxy cannot undo them, so they travel on with the body.
   */
  transferCodings: string | null = null;
  /** `connection: close`, or an HTTP/1.0 message without `connection: keep-alive`. */
  connectionClose = false;
  connectionKeepAlive = false;
  /** Names listed in the Connection header besides close/keep-alive: hop-by-hop for this message. */
  connectionTokens: string[] | null = null;
  /**
   * The protocol an HTTP/1.1 request asks to switch to (Upgrade, with `upgrade` among its
   * Connection tokens), or that a 101 response switched to; null otherwise. An `h2c` upgrade is
   * not one: Envoy's codec drops it. After the head of an upgrade, the bytes each way are the
   * new protocol's, carried as the body until the connection ends.
   */
  upgrade: string | null = null;
}

export class RequestHead extends MessageHead {
  /** From the Host header, or from an absolute-form request target; '' when absent. */
  authority = '';
  /** `http` or `https`: the downstream connection's, as x-forwarded-proto and HTTP/2's :scheme carry it. */
  scheme = 'http';
  expectContinue = false;

  constructor(
    readonly method: string,
    /** Origin-form: `/path?query`, `*` for `OPTIONS *`, '' for CONNECT; normalize_path and merge_slashes may rewrite it before routing. */
    public path: string,
    /** An HTTP/1.0 request: its response cannot be chunked, and keep-alive is opt-in. */
    readonly http10: boolean,
  ) {
    super();
  }
}

export class ResponseHead extends MessageHead {
  /**
   * Trailers may follow the body: false when the way it came rules them out (an HTTP/1 body
   * framed by its length or by the close, a local reply), so that an HTTP/2 response can end
   * with its last DATA frame instead of waiting for trailers that cannot come.
   */
  mayEndWithTrailers = true;

  constructor(
    /** Changeable by the HTTP filters before the codec writes it (the gRPC HTTP/1.1 bridge's 503). */
    public status: number,
    readonly http10: boolean,
  ) {
    super();
  }
}

/**
 * The upgrade a request asks for, as upgrade_configs name it: `CONNECT` for a CONNECT request
 * (its authority names the tunnel's far end, and after its head the bytes each way are the
 * tunnel's), its Upgrade otherwise; null when it asks for neither.
 */
export function upgradeTypeOf(head: RequestHead): string | null {
  return head.method === 'CONNECT' ? 'CONNECT' : head.upgrade;
}

/** Whether a header list, [name, value, ...], has header `name` (lower case). */
export function hasHeader(headers: readonly string[], name: string): boolean {
  for (let i = 0; i < headers.length; i += 2) if (headers[i] === name) return true;
  return false;
}

/** The first value of header `name` (lower case) in a header list, [name, value, ...]; undefined when absent. */
export function firstHeaderValue(headers: readonly string[], name: string): string | undefined {
  for (let i = 0; i < headers.length; i += 2) if (headers[i] === name) return headers[i + 1];
  return undefined;
}

/** `name` (lower case) set to `value` alone in a header list, [name, value, ...]. */
export function setHeader(headers: string[], name: string, value: string): void {
  removeHeaders(headers, (other) => other === name);
  headers.push(name, value);
}

/** Appends `value` to header `name` (lower case) as a list element, `, `-separated; adds the header when absent. */
export function appendHeaderValue(headers: string[], name: string, value: string): void {
  for (let i = 0; i < headers.length; i += 2) {
    if (headers[i] === name) {
      headers[i + 1] = headers[i + 1] === '' ? value : `${headers[i + 1]}, ${value}`;
      return;
    }
  }
  headers.push(name, value);
}

/** Drops every header whose name `drop` accepts from a header list, [name, value, ...], in place. */
export function removeHeaders(headers: string[], drop: (name: string) => boolean): void {
  let kept = 0;
  for (let i = 0; i < headers.length; i += 2) {
    if (drop(headers[i]!)) continue;
    headers[kept++] = headers[i]!;
    headers[kept++] = headers[i + 1]!;
  }
  headers.length = kept;
}
