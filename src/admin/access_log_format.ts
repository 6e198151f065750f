// Envoy's default access log line, which the admin access log uses:
// [%START_TIME%] "%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% %PROTOCOL%" %RESPONSE_CODE%
// %RESPONSE_FLAGS% %BYTES_RECEIVED% %BYTES_SENT% %DURATION% %RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)%
// "%REQ(X-FORWARDED-FOR)%" "%REQ(USER-AGENT)%" "%REQ(X-REQUEST-ID)%" "%REQ(:AUTHORITY)%" "%UPSTREAM_HOST%"
// With admin.security, one more quoted field: who the caller is (admin_access.ts), never a token.
// The line is a byte string, as every access log's (src/common/byte_string.ts): Node's HTTP
// server gives the request's header values as latin1, one character a byte; the caller's identity,
// from a certificate or the configuration, is Unicode and prints as its UTF-8.

import { utf8Bytes } from '../common/byte_string';

export interface AccessLogEntry {
  readonly startTime: Date;
  readonly method: string;
  readonly path: string;
  readonly protocol: string;
  readonly status: number;
  readonly bytesReceived: number;
  readonly bytesSent: number;
  readonly durationMs: number;
  readonly upstreamServiceTime?: string;
  readonly forwardedFor?: string;
  readonly userAgent?: string;
  readonly requestId?: string;
  readonly authority?: string;
  readonly upstreamHost?: string;
  /** Only with admin.security. */
  readonly identity?: string;
}

const dash = (v: string | undefined): string => (v === undefined || v === '' ? '-' : v);

export function formatAccessLogLine(e: AccessLogEntry): string {
  return (
    `[${e.startTime.toISOString()}] "${e.method} ${e.path} ${e.protocol}" ${e.status} - ` +
    `${e.bytesReceived} ${e.bytesSent} ${Math.round(e.durationMs)} ${dash(e.upstreamServiceTime)} ` +
    `"${dash(e.forwardedFor)}" "${dash(e.userAgent)}" "${dash(e.requestId)}" "${dash(e.authority)}" "${dash(e.upstreamHost)}"` +
    `${e.identity === undefined ? '' : ` "${utf8Bytes(e.identity)}"`}\n`
  );
}
