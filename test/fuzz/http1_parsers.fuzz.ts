// The HTTP/1 request and response parsers: pipelined messages built from the framings that
// matter (Content-Length, chunked with extensions and trailers, both, neither, upgrades),
// mutated in their bytes. Each input is parsed whole and again three bytes at a time, and the
// two must agree (a message's end cannot depend on how TCP cut the stream); the only exception
// allowed is a CodecError. Requests are also sent to Node's own server (llhttp): where both
// accept a message, they must read the same method and the same body, message by message,
// which is the agreement docs/http.md promises (framing as strict as llhttp's), and what
// keeps a request from being smuggled past the server behind the proxy.

import * as http from 'node:http';
import * as net from 'node:net';
import { CodecError } from '../../src/http/http1/codec_error';
import { Http1CodecStats } from '../../src/http/http1/codec_stats';
import type { ParserCallbacks } from '../../src/http/http1/parser';
import { RequestParser } from '../../src/http/http1/request_parser';
import { ResponseParser } from '../../src/http/http1/response_parser';
import type { MessageHead, RequestHead } from '../../src/http/message';
import { createHeapStatsStore } from '../../src/stats/store';
import type { FuzzInput, FuzzSurface } from './driver';
import { below, mutateBytes, pick, type Random } from './mutators';

/** A message as read: method (requests), body, and whether it ended; `error` when the parser refused the input after them. */
interface Reading {
  readonly messages: { method: string; upgrade: boolean; body: string; complete: boolean }[];
  error: string | null;
}

const SETTINGS = { acceptHttp10: true, defaultHostForHttp10: '', maxHeadersCount: 100, headersWithUnderscoresAction: 'ALLOW' } as const;
/** How long Node's server gets to answer one connection before what it read so far is compared. */
const LLHTTP_WAIT_MS = 250;

export const http1Parsers: FuzzSurface = {
  name: 'http1_parsers',
  timeBoundMs: 3000,
  concurrency: 8,
  async open() {
    const llhttp = await nodeServer();
    return {
      generate(random: Random): FuzzInput {
        const response = random() < 0.3;
        const wire = Buffer.from(Array.from({ length: 1 + below(random, 3) }, () => (response ? responseText(random) : requestText(random))).join(''), 'latin1');
        return { kind: response ? 'response' : 'request', bytes: random() < 0.5 ? mutateBytes(random, wire, 2) : wire };
      },
      async run(input: FuzzInput): Promise<void> {
        const request = input.kind === 'request';
        const whole = parse(request, [input.bytes]);
        const pieces = Array.from({ length: Math.ceil(input.bytes.length / 3) }, (_, i) => input.bytes.subarray(i * 3, i * 3 + 3));
        const split = parse(request, pieces);
        if (JSON.stringify(whole) !== JSON.stringify(split)) {
          throw new Error(`parsed whole: ${JSON.stringify(whole)}\nparsed in 3-byte pieces: ${JSON.stringify(split)}`);
        }
        if (request) compareWithLlhttp(whole, await llhttp.read(input.bytes));
      },
      async close() {
        await llhttp.close();
      },
    };
  },
};

function parse(request: boolean, pieces: readonly Buffer[]): Reading {
  const reading: Reading = { messages: [], error: null };
  const callbacks: ParserCallbacks<MessageHead> = {
    onMessageHead: (head) => {
      const method = request ? (head as RequestHead).method : '';
      reading.messages.push({ method, upgrade: head.upgrade !== null || method === 'CONNECT', body: '', complete: false });
    },
    onMessageBody: (chunk) => {
      reading.messages[reading.messages.length - 1]!.body += chunk.toString('latin1');
    },
    onMessageComplete: () => {
      reading.messages[reading.messages.length - 1]!.complete = true;
    },
  };
  let responses: ResponseParser | null = null;
  const parser = request
    ? new RequestParser(callbacks, SETTINGS, new Http1CodecStats(createHeapStatsStore().scope('http1')), true)
    : (responses = new ResponseParser(callbacks, 100, true));
  // Responses answer GET, HEAD and CONNECT in turn: each changes how a body is framed.
  const expected = ['GET', 'HEAD', 'CONNECT'];
  responses?.expectResponse('GET', false);
  if (responses) {
    const complete = callbacks.onMessageComplete;
    callbacks.onMessageComplete = (trailers) => {
      complete(trailers);
      responses!.expectResponse(expected[reading.messages.length % 3]!, false);
    };
  }
  try {
    for (const piece of pieces) parser.execute(piece);
    parser.finish();
  } catch (e) {
    if (!(e instanceof CodecError)) throw e;
    reading.error = e.details;
  }
  return reading;
}

/** Where both read a complete message, before either refused or switched protocols, they read the same one. */
function compareWithLlhttp(ours: Reading, theirs: Reading): void {
  const n = Math.min(ours.messages.length, theirs.messages.length);
  for (let i = 0; i < n; i++) {
    const a = ours.messages[i]!;
    const b = theirs.messages[i]!;
    if (a.upgrade || !a.complete || !b.complete) return;
    if (a.method !== b.method || a.body !== b.body) {
      throw new Error(`message ${i}: ours ${JSON.stringify(a)}, llhttp's ${JSON.stringify(b)}`);
    }
  }
}

/**
 * Node's HTTP server, reading each connection's bytes with llhttp (strict: no insecureHTTPParser).
 * Connections are told apart by the client's port; the server's side of one is destroyed when the
 * client's closes, so that nothing it still had to read lands in a later connection on that port.
 */
async function nodeServer(): Promise<{ read(bytes: Buffer): Promise<Reading>; close(): Promise<void> }> {
  const readings = new Map<number, Reading>();
  const serverSides = new Map<number, net.Socket>();
  // Node's own refusals above llhttp (a missing Host, an Expect it does not know) would hide a message llhttp read.
  const server = http.createServer({ insecureHTTPParser: false, requireHostHeader: false });
  server.on('checkExpectation', (req: http.IncomingMessage, res: http.ServerResponse) => server.emit('request', req, res));
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const reading = readings.get(req.socket.remotePort!);
    const message = { method: req.method ?? '', upgrade: false, body: '', complete: false };
    reading?.messages.push(message);
    req.setEncoding('latin1');
    req.on('data', (chunk: string) => (message.body += chunk));
    req.on('end', () => {
      message.complete = true;
      res.end();
    });
    req.on('error', () => {});
  });
  server.on('clientError', (error: Error, socket: net.Socket) => {
    const reading = readings.get(socket.remotePort!);
    if (reading) reading.error = error.message;
    socket.destroy();
  });
  // Upgrades and CONNECT leave HTTP: nothing after them is compared.
  const switched = (req: http.IncomingMessage, socket: net.Socket) => {
    readings.get(socket.remotePort!)?.messages.push({ method: req.method ?? '', upgrade: true, body: '', complete: false });
    socket.destroy();
  };
  server.on('upgrade', switched);
  server.on('connect', switched);
  server.on('connection', (socket: net.Socket) => serverSides.set(socket.remotePort!, socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    read: (bytes) =>
      new Promise<Reading>((resolve) => {
        const reading: Reading = { messages: [], error: null };
        const socket = net.connect(port, '127.0.0.1');
        const timer = setTimeout(() => socket.destroy(), LLHTTP_WAIT_MS);
        socket.on('connect', () => {
          readings.set(socket.localPort!, reading);
          socket.end(bytes);
        });
        socket.on('data', () => {});
        socket.on('error', () => {});
        socket.on('close', () => {
          clearTimeout(timer);
          const port = socket.localPort;
          if (port !== undefined) {
            serverSides.get(port)?.destroy();
            serverSides.delete(port);
            readings.delete(port);
          }
          resolve(reading);
        });
      }),
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

const METHODS = ['GET', 'POST', 'PUT', 'HEAD', 'OPTIONS', 'DELETE', 'PATCH', 'CONNECT', 'M-SEARCH', 'PURGE', 'QUERY', 'get'];

function requestText(random: Random): string {
  const method = pick(random, METHODS);
  const target = method === 'CONNECT' ? 'example.com:443' : pick(random, ['/', '/a/b?c=d', 'http://example.com/x', '*', '/%2e%2e/', '/a b']);
  const version = random() < 0.9 ? 'HTTP/1.1' : pick(random, ['HTTP/1.0', 'HTTP/2.0', 'HTTP/1.10', 'http/1.1']);
  const headers = [`Host: ${pick(random, ['example.com', 'example.com:80', '', 'a b', '[::1]:8080'])}`, ...extraHeaders(random)];
  const { framing, body } = framedBody(random, true);
  return `${method} ${target} ${version}\r\n${[...headers, ...framing].map((h) => `${h}\r\n`).join('')}\r\n${body}`;
}

function responseText(random: Random): string {
  const status = pick(random, ['200 OK', '204 No Content', '304 Not Modified', '100 Continue', '101 Switching Protocols', '404', '999 X', '20 Short']);
  const { framing, body } = framedBody(random, false);
  return `${random() < 0.9 ? 'HTTP/1.1' : 'HTTP/1.0'} ${status}\r\n${[...extraHeaders(random), ...framing].map((h) => `${h}\r\n`).join('')}\r\n${body}`;
}

function extraHeaders(random: Random): string[] {
  return Array.from({ length: below(random, 4) }, () =>
    pick(random, ['Connection: close', 'Connection: keep-alive', 'Connection: upgrade', 'Upgrade: websocket', 'Expect: 100-continue', 'X_Under: 1', 'X-Fold: a\r\n b', 'X-Empty:', 'Trailer: X-T', 'Te: trailers']),
  );
}

/** The framing headers and body of one message: the combinations smuggling is made of. */
function framedBody(random: Random, request: boolean): { framing: string[]; body: string } {
  const content = 'x'.repeat(below(random, 20));
  const chunked = `${content.length.toString(16)}${random() < 0.2 ? ';ext="v"' : ''}\r\n${content}\r\n${content.length === 0 ? '' : '0\r\n'}${random() < 0.2 ? 'X-T: t\r\n' : ''}\r\n`;
  switch (below(random, 7)) {
    case 0:
      return { framing: [], body: request ? '' : content };
    case 1:
      return { framing: [`Content-Length: ${content.length}`], body: content };
    case 2:
      return { framing: [`Content-Length: ${content.length}`, `Content-Length: ${pick(random, [content.length, content.length + 1])}`], body: content };
    case 3:
      return { framing: [pick(random, ['Transfer-Encoding: chunked', 'Transfer-Encoding: gzip, chunked', 'Transfer-Encoding: chunked, gzip', 'Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked', 'Transfer-Encoding:  chunked ', 'Transfer-Encoding: xchunked'])], body: chunked };
    case 4:
      return { framing: ['Transfer-Encoding: chunked', `Content-Length: ${content.length}`], body: chunked };
    case 5:
      return { framing: [`Content-Length: ${pick(random, ['+5', '-1', '0x5', '5 5', '5,5', '99999999999999999999', ''])}`], body: content };
    default:
      return { framing: ['Transfer-Encoding: chunked'], body: `${pick(random, ['ffffffffffffffff', '5 ', '0005', '5;', 'g'])}\r\n${content}\r\n0\r\n\r\n` };
  }
}
