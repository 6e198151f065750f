// One query to one server over UDP or TCP (RFC 1035 4.2: over TCP each message is preceded by
// its two-byte length). Every received message goes to `judge`; the exchange ends at the first
// one it accepts, at the timeout, on a socket error, or when the caller aborts. Each UDP query
// uses a fresh socket, so its source port is as random as the kernel makes it, connected to the
// server as c-ares's are: the kernel then delivers only the server's datagrams, and a closed
// port answers at once with ECONNREFUSED instead of leaving the try to time out.

import * as dgram from 'node:dgram';
import * as net from 'node:net';

import type { Clock } from '../../common/clock';
import type { DnsServer } from './resolv_conf';

export type Transport = 'udp' | 'tcp';

/** How an exchange ended without an accepted answer. */
export type ExchangeFailure = { readonly kind: 'timeout' } | { readonly kind: 'aborted' } | { readonly kind: 'transport'; readonly error: Error };

export class ExchangeError extends Error {
  constructor(readonly failure: ExchangeFailure) {
    super(failure.kind === 'transport' ? failure.error.message : failure.kind);
  }
}

export interface Exchange<T> {
  readonly transport: Transport;
  readonly server: DnsServer;
  readonly query: Buffer;
  readonly timeoutMs: number;
  readonly clock: Clock;
  readonly signal: AbortSignal | undefined;
  /** The verdict on a received message, or null to keep waiting. */
  readonly judge: (message: Buffer) => T | null;
}

/** Runs `start` with `finish`, which settles once and releases what `start` opened. */
function settleOnce<T>(exchange: Exchange<T>, start: (finish: (result: T | ExchangeFailure, ok: boolean) => void) => () => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (exchange.signal?.aborted) return reject(new ExchangeError({ kind: 'aborted' }));
    let settled = false;
    let release = (): void => {};
    const onAbort = () => finish({ kind: 'aborted' }, false);
    const timer = exchange.clock.setTimeout(() => finish({ kind: 'timeout' }, false), exchange.timeoutMs);
    function finish(result: T | ExchangeFailure, ok: boolean): void {
      if (settled) return;
      settled = true;
      exchange.clock.clearTimeout(timer);
      exchange.signal?.removeEventListener('abort', onAbort);
      release();
      if (ok) resolve(result as T);
      else reject(new ExchangeError(result as ExchangeFailure));
    }
    exchange.signal?.addEventListener('abort', onAbort);
    release = start(finish);
    if (settled) release();
  });
}

function exchangeUdp<T>(exchange: Exchange<T>): Promise<T> {
  return settleOnce(exchange, (finish) => {
    const { server } = exchange;
    const socket = dgram.createSocket(net.isIPv6(server.address.replace(/%.*$/, '')) ? 'udp6' : 'udp4');
    let closed = false;
    socket.on('error', (error) => finish({ kind: 'transport', error }, false));
    socket.on('message', (message) => {
      const verdict = exchange.judge(message);
      if (verdict !== null) finish(verdict, true);
    });
    socket.connect(server.port, server.address, () => {
      // The exchange may have ended (aborted, timed out) while the socket was connecting.
      if (closed) return;
      socket.send(exchange.query, (error) => {
        if (error) finish({ kind: 'transport', error }, false);
      });
    });
    return () => {
      closed = true;
      socket.close();
    };
  });
}

function exchangeTcp<T>(exchange: Exchange<T>): Promise<T> {
  return settleOnce(exchange, (finish) => {
    const { server, query } = exchange;
    const socket = net.connect({ host: server.address, port: server.port });
    let pending = Buffer.alloc(0);
    const frame = Buffer.alloc(2 + query.length);
    frame.writeUInt16BE(query.length, 0);
    query.copy(frame, 2);
    socket.on('connect', () => socket.write(frame));
    socket.on('error', (error) => finish({ kind: 'transport', error }, false));
    socket.on('close', () => finish({ kind: 'transport', error: new Error('connection closed before an answer') }, false));
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 2 && pending.length >= 2 + pending.readUInt16BE(0)) {
        const length = pending.readUInt16BE(0);
        const verdict = exchange.judge(pending.subarray(2, 2 + length));
        pending = pending.subarray(2 + length);
        if (verdict !== null) return finish(verdict, true);
      }
    });
    return () => socket.destroy();
  });
}

export function runExchange<T>(exchange: Exchange<T>): Promise<T> {
  return exchange.transport === 'udp' ? exchangeUdp(exchange) : exchangeTcp(exchange);
}
