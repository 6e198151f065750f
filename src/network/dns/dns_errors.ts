// Why a DNS lookup failed. A name that does not exist, or has no address of the family asked, is
// not a failure: it resolves to no addresses.

export class DnsError extends Error {
  constructor(
    readonly hostname: string,
    message: string,
  ) {
    super(`DNS lookup of ${hostname}: ${message}`);
    this.name = new.target.name;
  }
}

/** No server answered within the query timeout, on any try. */
export class DnsTimeoutError extends DnsError {
  constructor(hostname: string) {
    super(hostname, 'timed out');
  }
}

/** A server answered with an error code other than NXDOMAIN (SERVFAIL, REFUSED, ...). */
export class DnsServerError extends DnsError {
  constructor(
    hostname: string,
    readonly rcode: string,
  ) {
    super(hostname, `server answered ${rcode}`);
  }
}

/** The server's answer to the query was malformed (c-ares's EBADRESP): it ends the lookup. */
export class DnsMalformedResponseError extends DnsError {
  constructor(hostname: string, reason: string) {
    super(hostname, reason);
  }
}

/** The connection or socket to a server failed (refused, reset, closed before an answer). */
export class DnsTransportError extends DnsError {
  constructor(hostname: string, cause: Error) {
    super(hostname, cause.message);
    this.cause = cause;
  }
}

/** The caller gave up on the lookup (its AbortSignal fired). */
export class DnsAbortedError extends DnsError {
  constructor(hostname: string) {
    super(hostname, 'aborted');
  }
}
