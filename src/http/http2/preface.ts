// Envoy's codec_type AUTO over plaintext: a client with HTTP/2 prior knowledge opens with the
// connection preface (RFC 9113 section 3.4); anything else is HTTP/1.

import type * as net from 'node:net';

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/**
 * Reads until the first bytes tell the protocol, then pauses the socket, puts back what it read
 * and calls `decide` (true: HTTP/2). A connection that closes first is simply gone.
 */
export function sniffHttp2Preface(socket: net.Socket, decide: (http2: boolean) => void): void {
  let seen: Buffer | null = null;
  const onData = (chunk: Buffer): void => {
    seen = seen === null ? chunk : Buffer.concat([seen, chunk]);
    const n = Math.min(seen.length, PREFACE.length);
    const http2 = seen.compare(PREFACE, 0, n, 0, n) === 0;
    // A prefix of the preface could still be either.
    if (http2 && n < PREFACE.length) return;
    socket.off('data', onData);
    socket.off('error', ignoreError);
    socket.pause();
    socket.unshift(seen);
    decide(http2);
  };
  socket.on('data', onData);
  socket.on('error', ignoreError);
}

function ignoreError(): void {}
