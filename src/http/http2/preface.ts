// Envoy's codec_type AUTO over plaintext: a client with HTTP/2 prior knowledge opens with the
// connection preface (RFC 9113 section 3.4); anything else is HTTP/1.

import type * as net from 'node:net';
import type { Clock } from '../../common/clock';

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/**
 * Reads until the first bytes tell the protocol, then pauses the socket, puts back what it read
 * and calls `decide` (true: HTTP/2). A client silent for `timeoutMs` (0: no limit) is handed
 * over as HTTP/1 with `timedOut` set, for the connection manager to apply the timeout that ran
 * out. A connection that closes first is simply gone.
 */
export function sniffHttp2Preface(socket: net.Socket, clock: Clock, timeoutMs: number, decide: (http2: boolean, timedOut: boolean) => void): void {
  let seen: Buffer | null = null;
  const timer = timeoutMs > 0 ? clock.setTimeout(() => finish(false, true), timeoutMs) : null;
  const finish = (http2: boolean, timedOut: boolean): void => {
    if (timer !== null) clock.clearTimeout(timer);
    socket.off('data', onData);
    socket.off('error', ignoreError);
    socket.off('close', onClose);
    socket.pause();
    if (seen !== null) socket.unshift(seen);
    decide(http2, timedOut);
  };
  const onClose = (): void => {
    if (timer !== null) clock.clearTimeout(timer);
  };
  const onData = (chunk: Buffer): void => {
    seen = seen === null ? chunk : Buffer.concat([seen, chunk]);
    const n = Math.min(seen.length, PREFACE.length);
    const http2 = seen.compare(PREFACE, 0, n, 0, n) === 0;
    // A prefix of the preface could still be either.
    if (http2 && n < PREFACE.length) return;
    finish(http2, false);
  };
  socket.on('data', onData);
  socket.on('error', ignoreError);
  socket.on('close', onClose);
}

function ignoreError(): void {}
