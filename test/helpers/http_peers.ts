// Real HTTP peers for data plane tests: upstream servers that describe what they received,
// and a client that returns whole responses. Everything on 127.0.0.1, port 0.

import * as http from 'node:http';
import * as http2 from 'node:http2';
import * as net from 'node:net';
import type { TestContext } from 'node:test';

export interface Seen {
  readonly upstream: string;
  readonly method: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly bodyBytes: number;
}

export interface Upstream {
  readonly name: string;
  readonly port: number;
  readonly server: http.Server;
  /** Requests received, in order. */
  readonly seen: Seen[];
  close(): Promise<void>;
}

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer) => void;

/** An upstream answering 200 with a JSON description of the request, unless `handler` says otherwise. */
export async function startUpstream(name: string, handler?: Handler): Promise<Upstream> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const record = { upstream: name, method: req.method!, url: req.url!, headers: req.headers, bodyBytes: body.length };
      seen.push(record);
      if (handler) {
        handler(req, res, body);
        return;
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(record));
    });
  });
  await listen(server);
  return {
    name,
    port: (server.address() as net.AddressInfo).port,
    server,
    seen,
    close: () => closeServer(server),
  };
}

/** Listens on 127.0.0.1 port 0 and resolves to the port bound. */
export function listen(server: net.Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)));
}

export function closeServer(server: http.Server | net.Server): Promise<void> {
  if ('closeAllConnections' in server) server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

export interface Reply {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

export interface RequestOptions {
  readonly method?: string;
  readonly path?: string;
  readonly headers?: http.OutgoingHttpHeaders;
  readonly body?: string | Buffer;
  readonly agent?: http.Agent;
}

/** One request to the proxy at `port`; resolves with the whole response. */
export function request(port: number, options: RequestOptions = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: options.method ?? 'GET',
        path: options.path ?? '/',
        headers: options.headers,
        agent: options.agent ?? false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString() }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** One request on an HTTP/2 session (`options.headers` may set `:authority`); resolves with the whole response. */
export function h2Request(session: http2.ClientHttp2Session, options: RequestOptions = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': options.method ?? 'GET', ':path': options.path ?? '/', ...options.headers });
    let head: http2.IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.on('response', (received) => (head = received));
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      const { ':status': status, ...headers } = head;
      resolve({ status: Number(status), headers: headers as http.IncomingHttpHeaders, body: Buffer.concat(chunks).toString() });
    });
    stream.on('error', reject);
    stream.end(options.body);
  });
}

/** Sends one request to a named listener. */
export type ListenerSend = (listener: string, options: RequestOptions) => Promise<Reply>;

/**
 * Requests to the named listeners over HTTP/1.1 (a connection each) and h2c (one session per
 * listener, opened on first use), for tests that run the same cases on both; close() ends the sessions.
 */
export function listenerClients(ports: Readonly<Record<string, number>>): { readonly protocols: readonly (readonly [string, ListenerSend])[]; close(): void } {
  const sessions = new Map<string, http2.ClientHttp2Session>();
  const session = (listener: string): http2.ClientHttp2Session => {
    let opened = sessions.get(listener);
    if (opened === undefined) sessions.set(listener, (opened = http2.connect(`http://127.0.0.1:${ports[listener]}`)));
    return opened;
  };
  return {
    protocols: [
      ['HTTP/1.1', (listener, options) => request(ports[listener]!, options)],
      ['h2c', (listener, options) => h2Request(session(listener), options)],
    ],
    close: () => {
      for (const opened of sessions.values()) opened.destroy();
    },
  };
}

/** A TCP server on 127.0.0.1 whose connections `onConnection` handles; all closed after the test. */
export async function tcpUpstream(t: TestContext, onConnection: (socket: net.Socket) => void): Promise<number> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
    onConnection(s);
  });
  await listen(server);
  t.after(async () => {
    for (const s of sockets) s.destroy();
    await closeServer(server);
  });
  return (server.address() as net.AddressInfo).port;
}
