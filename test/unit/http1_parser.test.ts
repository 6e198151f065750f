import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CodecError } from '../../src/http/http1/codec_error';
import { BODY_CHUNKED, BODY_UNTIL_CLOSE, type MessageHead, type RequestHead, type ResponseHead } from '../../src/http/message';
import type { ParserCallbacks } from '../../src/http/http1/parser';
import { type Http1Settings, RequestParser } from '../../src/http/http1/request_parser';
import { ResponseParser } from '../../src/http/http1/response_parser';
import { Http1CodecStats } from '../../src/http/http1/codec_stats';
import { createHeapStatsStore } from '../../src/stats/store';

interface Message<H> {
  head: H;
  body: string;
  complete: boolean;
}

class Recorder<H extends MessageHead> implements ParserCallbacks<H> {
  readonly messages: Message<H>[] = [];

  onMessageHead(head: H): void {
    this.messages.push({ head, body: '', complete: false });
  }

  onMessageBody(chunk: Buffer): void {
    this.messages[this.messages.length - 1].body += chunk.toString('latin1');
  }

  onMessageComplete(): void {
    this.messages[this.messages.length - 1].complete = true;
  }
}

const HTTP11_ONLY: Http1Settings = { acceptHttp10: false, defaultHostForHttp10: '', maxHeadersCount: 100, headersWithUnderscoresAction: 'ALLOW' };

function codecStats(): Http1CodecStats {
  return new Http1CodecStats(createHeapStatsStore().scope('http1'));
}

function parseRequests(...pieces: string[]): Message<RequestHead>[] {
  return parseRequestsWith(HTTP11_ONLY, ...pieces);
}

function parseRequestsWith(settings: Http1Settings, ...pieces: string[]): Message<RequestHead>[] {
  return parseRequestsCounted(settings, codecStats(), ...pieces);
}

function parseRequestsCounted(settings: Http1Settings, stats: Http1CodecStats, ...pieces: string[]): Message<RequestHead>[] {
  const recorder = new Recorder<RequestHead>();
  const parser = new RequestParser(recorder, settings, stats);
  for (const piece of pieces) parser.execute(Buffer.from(piece, 'latin1'));
  return recorder.messages;
}

function requestError(text: string, settings = HTTP11_ONLY): CodecError {
  try {
    parseRequestsWith(settings, text);
  } catch (e) {
    assert.ok(e instanceof CodecError);
    return e;
  }
  assert.fail(`accepted: ${JSON.stringify(text)}`);
}

test('a request head: method, path, authority, lower-cased end-to-end headers', () => {
  const [m] = parseRequests('GET /a?b=1 HTTP/1.1\r\nHost: example.com\r\nX-Thing:  v a l  \r\nAccept: */*\r\n\r\n');
  assert.equal(m.head.method, 'GET');
  assert.equal(m.head.path, '/a?b=1');
  assert.equal(m.head.authority, 'example.com');
  assert.deepEqual(m.head.headers, ['x-thing', 'v a l', 'accept', '*/*']);
  assert.equal(m.head.bodyLength, 0);
  assert.equal(m.complete, true);
});

test('hop-by-hop headers are interpreted and kept out of the forwarded list', () => {
  const [m] = parseRequests(
    'POST / HTTP/1.1\r\nHost: h\r\nConnection: close, X-Secret\r\nKeep-Alive: 5\r\nProxy-Connection: x\r\nTE: trailers\r\nTrailer: a\r\nUpgrade: websocket\r\nX-Secret: s\r\nContent-Length: 0\r\n\r\n',
  );
  assert.deepEqual(m.head.headers, ['x-secret', 's']);
  assert.equal(m.head.connectionClose, true);
  assert.deepEqual(m.head.connectionTokens, ['x-secret']);
  assert.equal(m.head.contentLength, 0);
});

test('a content-length body may arrive in pieces; the next message follows it', () => {
  const messages = parseRequests('POST /u HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\n01234', '56789GET /n', 'ext HTTP/1.1\r\nHost: h\r\n\r\n');
  assert.equal(messages.length, 2);
  assert.equal(messages[0].body, '0123456789');
  assert.equal(messages[0].complete, true);
  assert.equal(messages[1].head.path, '/next');
});

test('chunked bodies are decoded across arbitrary splits; extensions and trailers dropped', () => {
  const wire = 'POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n';
  for (let split = 1; split < wire.length; split += 7) {
    const [m] = parseRequests(wire.slice(0, split), wire.slice(split));
    assert.equal(m.head.bodyLength, BODY_CHUNKED);
    assert.equal(m.body, 'hello world');
    assert.equal(m.complete, true, `split at ${split}`);
  }
});

test('empty lines after a message, cut anywhere, then the close: read as when they come whole', () => {
  const requests = 'GET / HTTP/1.1\r\nHost: h\r\n\r\n\r\n\r\n';
  const responses = 'HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n\r\n\r\n';
  for (let split = 1; split < requests.length; split++) {
    const recorder = new Recorder<RequestHead>();
    const parser = new RequestParser(recorder, HTTP11_ONLY, codecStats());
    for (const piece of [requests.slice(0, split), requests.slice(split, split + 1), requests.slice(split + 1)]) parser.execute(Buffer.from(piece, 'latin1'));
    parser.finish();
    assert.equal(recorder.messages.length, 1, `split at ${split}`);
  }
  for (let split = 1; split < responses.length; split++) {
    const { messages, parser } = parseResponses(false, responses.slice(0, split), responses.slice(split, split + 1), responses.slice(split + 1));
    parser.finish();
    assert.equal(messages.length, 1, `split at ${split}`);
  }
  // A third empty line is refused whole or cut.
  assert.throws(() => parseRequests('GET / HTTP/1.1\r\nHost: h\r\n\r\n\r\n\r', '\n\r', '\nGET'), CodecError);
});

test('pipelined requests wait while paused and follow on resume', () => {
  const recorder = new Recorder<RequestHead>();
  const parser = new RequestParser({
    onMessageHead: (h) => recorder.onMessageHead(h),
    onMessageBody: (c) => recorder.onMessageBody(c),
    onMessageComplete: () => {
      recorder.onMessageComplete();
      parser.pause();
    },
  }, HTTP11_ONLY, codecStats());
  parser.execute(Buffer.from('GET /1 HTTP/1.1\r\nHost: h\r\n\r\nGET /2 HTTP/1.1\r\nHost: h\r\n\r\n'));
  assert.equal(recorder.messages.length, 1);
  assert.ok(parser.bufferedBytes > 0);
  parser.resume();
  assert.deepEqual(recorder.messages.map((m) => m.head.path), ['/1', '/2']);
});

test('absolute-form targets give the authority and an origin-form path', () => {
  const [m] = parseRequests('GET http://Example.com:8080/x?y HTTP/1.1\r\nHost: other\r\n\r\n');
  assert.equal(m.head.authority, 'Example.com:8080');
  assert.equal(m.head.path, '/x?y');
});

test('Expect: 100-continue is noted and not forwarded', () => {
  const [m] = parseRequests('PUT / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\nx');
  assert.equal(m.head.expectContinue, true);
  assert.deepEqual(m.head.headers, []);
});

test('malformed requests are rejected with the status a server answers', () => {
  assert.equal(requestError('GET / HTTP/1.0\r\n\r\n').status, 426);
  assert.equal(requestError('GET / HTTP/2.0\r\n\r\n').status, 400);
  assert.equal(requestError('GET /\r\n\r\n').status, 400);
  assert.equal(requestError('GET / HTTP/1.1\r\nBad Name: x\r\n\r\n').status, 400);
  assert.equal(requestError('GET / HTTP/1.1\r\nName : x\r\n\r\n').status, 400);
  assert.equal(requestError('GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n').status, 400);
  assert.equal(requestError('GET / HTTP/1.1\r\nA: b\nC: d\r\n\r\n').status, 400);
  assert.equal(requestError('GET / HTTP/1.1\r\nA: b\0\r\n\r\n').status, 400);
  assert.equal(requestError('GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n').status, 400);
  assert.equal(requestError('POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n').status, 400);
  assert.equal(requestError('POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n').status, 400);
  assert.equal(requestError('POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n').status, 400);
  assert.equal(requestError('POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n').status, 501);
  assert.equal(requestError('POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n').status, 400);
  assert.equal(requestError(`GET / HTTP/1.1\r\nX: ${'a'.repeat(61 * 1024)}\r\n\r\n`).status, 431);
  assert.equal(requestError(`GET / HTTP/1.1\r\n${'X: y\r\n'.repeat(101)}\r\n`).status, 431);
});

function parseResponses(headRequest: boolean, ...pieces: string[]): { messages: Message<ResponseHead>[]; parser: ResponseParser } {
  const recorder = new Recorder<ResponseHead>();
  const parser = new ResponseParser(recorder, 100);
  parser.expectResponse(headRequest ? 'HEAD' : 'GET', false);
  for (const piece of pieces) parser.execute(Buffer.from(piece, 'latin1'));
  return { messages: recorder.messages, parser };
}

test('responses: status, framing by content-length, chunked, or until close', () => {
  const cl = parseResponses(false, 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nServer: up\r\n\r\nok').messages[0];
  assert.equal(cl.head.status, 200);
  assert.equal(cl.body, 'ok');
  assert.deepEqual(cl.head.headers, ['server', 'up']);

  const chunked = parseResponses(false, 'HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n').messages[0];
  assert.equal(chunked.head.bodyLength, BODY_CHUNKED);
  assert.equal(chunked.body, 'ab');

  const { messages, parser } = parseResponses(false, 'HTTP/1.0 200 OK\r\n\r\nuntil', ' close');
  assert.equal(messages[0].head.bodyLength, BODY_UNTIL_CLOSE);
  assert.equal(messages[0].head.connectionClose, true);
  assert.equal(messages[0].complete, false);
  parser.finish();
  assert.equal(messages[0].body, 'until close');
  assert.equal(messages[0].complete, true);
});

test('responses without a body: HEAD, 204, 304; interim 1xx responses are skipped', () => {
  const head = parseResponses(true, 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n').messages[0];
  assert.equal(head.head.contentLength, 5);
  assert.equal(head.complete, true);
  const noContent = parseResponses(false, 'HTTP/1.1 204 No Content\r\n\r\n').messages[0];
  assert.equal(noContent.complete, true);
  const { messages } = parseResponses(false, 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n');
  assert.deepEqual(messages.map((m) => m.head.status), [200]);
});

test('a response cut short by the close is an error', () => {
  const { parser } = parseResponses(false, 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab');
  assert.throws(() => parser.finish(), CodecError);
  assert.throws(() => parseResponses(false, 'HTTP/1.1 2000 OK\r\n\r\n'), CodecError);
  assert.throws(() => parseResponses(false, 'HTTP/1.1 101 Switching Protocols\r\n\r\n'), CodecError);
});

test('after an upgrade request, and its 101, the bytes are the new protocol\'s, to the close', () => {
  const [request] = parseRequests('GET /chat HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nContent-Length: 2\r\n\r\n\x81\x02hiGET / HTTP/1.1\r\n\r\n');
  assert.equal(request.head.upgrade, 'websocket');
  assert.equal(request.head.bodyLength, BODY_UNTIL_CLOSE);
  assert.equal(request.body, '\x81\x02hiGET / HTTP/1.1\r\n\r\n');
  assert.equal(request.complete, false);

  const recorder = new Recorder<ResponseHead>();
  const parser = new ResponseParser(recorder, 100);
  parser.expectResponse('GET', true);
  parser.execute(Buffer.from('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n\x81\x02ok', 'latin1'));
  const [response] = recorder.messages;
  assert.equal(response.head.status, 101);
  assert.equal(response.head.upgrade, 'websocket');
  assert.equal(response.head.connectionClose, true);
  assert.equal(response.body, '\x81\x02ok');
  parser.finish();
  assert.equal(response.complete, true);
});

// ---- strictness: what RFC 9112 and llhttp's strict mode refuse is refused -------------------

const CHUNKED_BODY = '5\r\nhello\r\n0\r\n\r\n';

/** The body a request with these extra header lines gets, or the status it is refused with. */
function outcome(headerLines: string, body = CHUNKED_BODY): string | number {
  try {
    const [m] = parseRequests(`POST / HTTP/1.1\r\nHost: h\r\n${headerLines}\r\n${body}`);
    return m.head.bodyLength === BODY_CHUNKED && m.complete ? `chunked:${m.body}` : `length ${m.head.bodyLength}`;
  } catch (e) {
    assert.ok(e instanceof CodecError);
    return e.status;
  }
}

test('Transfer-Encoding obfuscations: read as the RFC says, or refused with 400', () => {
  const cases: [string, string | number][] = [
    ['Transfer-Encoding: chunked\r\n', 'chunked:hello'],
    // Coding names are case-insensitive (RFC 9112 section 7); OWS around a value is not part of it.
    ['Transfer-Encoding: Chunked\r\n', 'chunked:hello'],
    ['Transfer-Encoding: CHUNKED\r\n', 'chunked:hello'],
    ['Transfer-Encoding:  chunked\r\n', 'chunked:hello'],
    ['Transfer-Encoding: chunked\t\r\n', 'chunked:hello'],
    ['Transfer-Encoding:\tchunked \r\n', 'chunked:hello'],
    // Only SP and HTAB are whitespace: U+00A0 (0xA0 in latin1) makes the coding unknown.
    ['Transfer-Encoding: chunked\xa0\r\n', 400],
    ['Transfer-Encoding: \xa0chunked\r\n', 400],
    ['Transfer-Encoding: chunked\x0b\r\n', 400],
    // Chunked applied twice, or not last, or with parameters.
    ['Transfer-Encoding: chunked, chunked\r\n', 400],
    ['Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n', 400],
    ['Transfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n', 400],
    ['Transfer-Encoding: chunked, gzip\r\n', 400],
    ['Transfer-Encoding: chunked;q=1\r\n', 400],
    // Empty elements and empty lines: parsers disagree on them.
    ['Transfer-Encoding: chunked,\r\n', 400],
    ['Transfer-Encoding: ,chunked\r\n', 400],
    ['Transfer-Encoding:\r\nTransfer-Encoding: chunked\r\n', 400],
    ['Transfer-Encoding: chunked\r\nTransfer-Encoding:\r\n', 400],
    ['Transfer-Encoding:\r\n', 400],
    // A final coding other than chunked in a request: its length cannot be known (RFC 9112 6.3).
    ['Transfer-Encoding: xchunked\r\n', 400],
    ['Transfer-Encoding: chunkedchunked\r\n', 400],
    ['Transfer-Encoding: gzip\r\n', 400],
    ['Transfer-Encoding: identity\r\n', 400],
    ['Transfer-Encoding: "chunked"\r\n', 400],
    // Codings before chunked that we cannot decode: 501, as Envoy answers.
    ['Transfer-Encoding: gzip, chunked\r\n', 501],
    ['Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n', 501],
    // Both framings (RFC 9112 section 11.2): refused, whatever their order.
    ['Transfer-Encoding: chunked\r\nContent-Length: 5\r\n', 400],
    ['Content-Length: 5\r\nTransfer-Encoding: chunked\r\n', 400],
    ['Content-Length: 0\r\nTransfer-Encoding: chunked\r\n', 400],
    // The name must be exactly a token followed by the colon.
    ['Transfer-Encoding : chunked\r\n', 400],
    ['Transfer-Encoding\t: chunked\r\n', 400],
    [' Transfer-Encoding: chunked\r\n', 400],
    ['X: y\r\n Transfer-Encoding: chunked\r\n', 400],
    ['Transfer-Encoding: chunked\r\n  abc\r\n', 400],
    ['Transfer-Encoding\0: chunked\r\n', 400],
    ['Transfer-Encoding: chunked\rX: y\r\n', 400],
    ['Transfer-Encoding: chunked\nX: y\r\n', 400],
  ];
  for (const [lines, expected] of cases) assert.equal(outcome(lines), expected, JSON.stringify(lines));
});

test('Content-Length: digits only; a list of identical values is one value, differing ones are refused', () => {
  const cases: [string, string | number][] = [
    ['Content-Length: 5\r\n', 'length 5'],
    ['Content-Length:  5 \r\n', 'length 5'],
    ['Content-Length: 005\r\n', 'length 5'],
    ['Content-Length: 5, 5\r\n', 'length 5'],
    ['Content-Length: 5,5\r\n', 'length 5'],
    ['Content-Length: 5\r\nContent-Length: 5\r\n', 'length 5'],
    ['Content-Length: 5, 6\r\n', 400],
    ['Content-Length: 5\r\nContent-Length: 6\r\n', 400],
    ['Content-Length: 5, 5\r\nContent-Length: 6\r\n', 400],
    ['Content-Length: 5,\r\n', 400],
    ['Content-Length: ,5\r\n', 400],
    ['Content-Length: 5 5\r\n', 400],
    ['Content-Length: +5\r\n', 400],
    ['Content-Length: -5\r\n', 400],
    ['Content-Length: 0x5\r\n', 400],
    ['Content-Length: 5.0\r\n', 400],
    ['Content-Length: 5\xa0\r\n', 400],
    ['Content-Length:\r\n', 400],
    ['Content-Length: 1234567890123456\r\n', 400],
  ];
  for (const [lines, expected] of cases) {
    const result = outcome(lines, 'hello');
    assert.equal(result, expected, JSON.stringify(lines));
  }
});

test('chunk lines: size, then extensions as the grammar has them, then CRLF (llhttp strict cases)', () => {
  const cases: [string, string | number][] = [
    ['5\r\nhello\r\n0\r\n\r\n', 'chunked:hello'],
    ['005\r\nhello\r\n000\r\n\r\n', 'chunked:hello'],
    ['5;ilovew3;somuchlove=aretheseparametersfor;another=withvalue\r\nhello\r\n0\r\n\r\n', 'chunked:hello'],
    ['5;ilovew3="I \\"love\\"; \\\\extensions\\\\";somuchlove="aretheseparametersfor";blah;foo=bar\r\nhello\r\n0\r\n\r\n', 'chunked:hello'],
    // BWS around ';' and '=' is in the grammar (RFC 9112 section 7.1.1).
    ['5 ; a = b\r\nhello\r\n0\r\n\r\n', 'chunked:hello'],
    // llhttp: "Space after chunk header", "No semicolon before chunk extensions".
    ['5 \r\nhello\r\n0\r\n\r\n', 400],
    ['5\t\r\nhello\r\n0\r\n\r\n', 400],
    ['2 erfrferferf\r\nhe\r\n0\r\n\r\n', 400],
    // "No extension after semicolon", "Unbalanced chunk extensions quoting".
    ['5;\r\nhello\r\n0\r\n\r\n', 400],
    ['5;a=\r\nhello\r\n0\r\n\r\n', 400],
    ['5;=b\r\nhello\r\n0\r\n\r\n', 400],
    ['5;ilovew3="abc";somuchlove="def; ghi\r\nhello\r\n0\r\n\r\n', 400],
    ['5;a="b\\"\r\nhello\r\n0\r\n\r\n', 400],
    // "Chunk header not terminated by CRLF"; the old trimEnd() read `5\r\r\n` as 5.
    ['5\r\r;ABCD\r\nhello\r\n0\r\n\r\n', 400],
    ['5\r\r\nhello\r\n0\r\n\r\n', 400],
    ['5\nhello\r\n0\r\n\r\n', 400],
    // Sizes: hex digits only, at most 13 of them.
    ['0x5\r\nhello\r\n0\r\n\r\n', 400],
    ['+5\r\nhello\r\n0\r\n\r\n', 400],
    [' 5\r\nhello\r\n0\r\n\r\n', 400],
    ['\r\nhello\r\n0\r\n\r\n', 400],
    ['00000000000005\r\nhello\r\n0\r\n\r\n', 400],
    // Data not followed by CRLF, a last chunk missing, bad trailer lines.
    ['5\r\nhelloX\r\n0\r\n\r\n', 400],
    ['3\r\nfoo\r\n\r\n', 400],
    ['5\r\nhello\r\n0\r\nX-T: t\r\n\r\n', 'chunked:hello'],
    ['5\r\nhello\r\n0\r\nBad Trailer: t\r\n\r\n', 400],
    ['5\r\nhello\r\n0\r\nno-colon\r\n\r\n', 400],
    ['5\r\nhello\r\n0\r\nX: \x01\r\n\r\n', 400],
    ['5\r\nhello\r\n0\r\nX: a\rb\r\n\r\n', 400],
  ];
  for (const [body, expected] of cases) assert.equal(outcome('Transfer-Encoding: chunked\r\n', body), expected, JSON.stringify(body));
});

test('request lines: origin-form starts with /, ASCII only; 1.x above 1.1 is 1.1', () => {
  assert.equal(requestError('GET foo HTTP/1.1\r\nHost: h\r\n\r\n').status, 400);
  assert.equal(requestError('GET * HTTP/1.1\r\nHost: h\r\n\r\n').status, 400);
  // authority-form is CONNECT's alone, and CONNECT's only form.
  assert.equal(requestError('GET h:443 HTTP/1.1\r\nHost: h:443\r\n\r\n').status, 400);
  assert.equal(requestError('CONNECT /x HTTP/1.1\r\nHost: h:443\r\n\r\n').status, 400);
  assert.equal(requestError('CONNECT h:443:1 HTTP/1.1\r\nHost: h\r\n\r\n').status, 400);
  const [connect] = parseRequests('CONNECT h.example:443 HTTP/1.1\r\nHost: h.example:443\r\n\r\n\x16\x03\x01');
  assert.deepEqual([connect!.head.method, connect!.head.authority, connect!.head.path, connect!.head.bodyLength], ['CONNECT', 'h.example:443', '', BODY_UNTIL_CLOSE]);
  // What follows the head is the tunnel's.
  assert.equal(connect!.body, '\x16\x03\x01');
  assert.equal(requestError('GET /caf\xc3\xa9 HTTP/1.1\r\nHost: h\r\n\r\n').status, 400);
  assert.equal(requestError('GET /\xff HTTP/1.1\r\nHost: h\r\n\r\n').status, 400);
  assert.equal(requestError('GET /a b HTTP/1.1\r\nHost: h\r\n\r\n').status, 400);
  assert.equal(requestError('GET  / HTTP/1.1\r\nHost: h\r\n\r\n').status, 400);
  assert.equal(requestError('GET / HTTP/1.1 \r\nHost: h\r\n\r\n').status, 400);
  assert.equal(requestError('GET / http/1.1\r\nHost: h\r\n\r\n').status, 400);
  assert.equal(requestError('GET / HTTP/1.10\r\nHost: h\r\n\r\n').status, 400);
  assert.equal(requestError('GET / HTTP/0.9\r\nHost: h\r\n\r\n').status, 426);
  const [options] = parseRequests('OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n');
  assert.equal(options.head.path, '*');
  const [later] = parseRequests('GET / HTTP/1.2\r\nHost: h\r\n\r\n');
  assert.equal(later.head.http10, false);
  assert.equal(later.head.connectionClose, false);
});

test('request methods: Envoy 1.16\'s table, case-sensitive; any other is 400', () => {
  for (const method of ['FOOBAR', 'get', 'Get', 'MKCOLA', 'GETS', 'QUERY', 'PRI']) {
    const error = requestError(`${method} / HTTP/1.1\r\nHost: h\r\n\r\n`);
    assert.deepEqual([error.status, error.details], [400, 'http1.codec_error'], method);
  }
  for (const method of ['GET', 'DELETE', 'MKCOL', 'M-SEARCH', 'PURGE', 'MKCALENDAR', 'SOURCE', 'UNLINK']) {
    const [message] = parseRequests(`${method} / HTTP/1.1\r\nHost: h\r\n\r\n`);
    assert.equal(message.head.method, method);
  }
});

test('Host and absolute-form authorities are a uri-host with an optional port, without userinfo', () => {
  for (const host of ['example.com', 'example.com:8080', 'h:', '10.0.0.1:80', '[::1]:8080', '[2001:db8::1]', 'a%41b', "x!$&'()*+,;=y", '[v1.fe]']) {
    assert.equal(parseRequests(`GET / HTTP/1.1\r\nHost: ${host}\r\n\r\n`)[0].head.authority, host);
  }
  for (const host of ['a b', 'a/b@c', 'user@h', 'user:pw@h', 'h:80a', 'a%4', 'a%zz', '[::1', '[nope]', 'caf\xc3\xa9', 'h\\x', 'h#', 'h?']) {
    assert.equal(requestError(`GET / HTTP/1.1\r\nHost: ${host}\r\n\r\n`).status, 400, host);
  }
  // An empty Host is well-formed; the connection manager answers it.
  assert.equal(parseRequests('GET / HTTP/1.1\r\nHost:\r\n\r\n')[0].head.authority, '');

  const [upper] = parseRequests('GET HTTP://Example.com HTTP/1.1\r\n\r\n');
  assert.deepEqual([upper.head.authority, upper.head.path], ['Example.com', '/']);
  const [query] = parseRequests('GET https://h:8443?x=1 HTTP/1.1\r\nHost: other\r\n\r\n');
  assert.deepEqual([query.head.authority, query.head.path], ['h:8443', '/?x=1']);
  assert.equal(requestError('GET http://user:pw@host/ HTTP/1.1\r\nHost: host\r\n\r\n').status, 400);
  assert.equal(requestError('GET http://host@evil/ HTTP/1.1\r\n\r\n').status, 400);
  assert.equal(requestError('GET http:///x HTTP/1.1\r\nHost: h\r\n\r\n').status, 400);
  assert.equal(requestError('GET ftp://h/x HTTP/1.1\r\nHost: h\r\n\r\n').status, 400);
  assert.equal(requestError('GET http:/h/x HTTP/1.1\r\nHost: h\r\n\r\n').status, 400);
});

test('empty lines before a request line: two CRLFs are skipped, more or bare ones are refused', () => {
  const [m] = parseRequests('\r\n\r\nGET /x HTTP/1.1\r\nHost: h\r\n\r\n');
  assert.equal(m.head.path, '/x');
  // Counted across reads, and a CR split from its LF.
  assert.equal(parseRequests('\r', '\n', '\r', '\nGET /y HTTP/1.1\r\nHost: h\r\n\r\n')[0].head.path, '/y');
  // A message's count does not carry over to the next one.
  const pipelined = parseRequests('\r\n\r\nGET /1 HTTP/1.1\r\nHost: h\r\n\r\n\r\n\r\nGET /2 HTTP/1.1\r\nHost: h\r\n\r\n');
  assert.deepEqual(pipelined.map((r) => r.head.path), ['/1', '/2']);
  assert.equal(requestError('\r\n\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n').status, 400);
  assert.throws(() => parseRequests('\r\n', '\r\n', '\r\n'), CodecError);
  assert.equal(requestError('\nGET / HTTP/1.1\r\nHost: h\r\n\r\n').status, 400);
  assert.equal(requestError('\rGET / HTTP/1.1\r\nHost: h\r\n\r\n').status, 400);
});

test('a head sent a few bytes at a time is searched once, not once per read', () => {
  const lines = Array.from({ length: 90 }, (_, i) => `X-Pad-${i}: ${'v'.repeat(660)}\r\n`).join('');
  const head = Buffer.from(`GET /slow HTTP/1.1\r\nHost: h\r\n${lines}\r\n`, 'latin1');
  assert.ok(head.length > 59 * 1024 && head.length <= 60 * 1024, `${head.length}`);
  const recorder = new Recorder<RequestHead>();
  const parser = new RequestParser(recorder, HTTP11_ONLY, codecStats());
  for (let i = 0; i < head.length; i += 3) parser.execute(head.subarray(i, i + 3));
  assert.equal(recorder.messages.length, 1);
  assert.equal(recorder.messages[0].head.headers.length, 180);
  // Each byte is looked at about twice (when it arrives, and once more when the head is joined);
  // searching the whole held head on every read would be some 20 000 times that.
  assert.ok(parser.scannedBytes <= 2 * head.length + 16, `${parser.scannedBytes} bytes scanned for a ${head.length} byte head`);
});

test('messages split at every byte parse as when sent whole', () => {
  const wire =
    '\r\nPOST /a HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5;x="y"\r\nhello\r\n0\r\nT: 1\r\n\r\n' +
    'GET /b HTTP/1.1\r\nHost: h\r\n\r\n' +
    'PUT /c HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc';
  const whole = parseRequests(wire).map((m) => [m.head.path, m.body, m.complete]);
  assert.deepEqual(whole, [['/a', 'hello', true], ['/b', '', true], ['/c', 'abc', true]]);
  for (const size of [1, 2, 3, 5, 7]) {
    const pieces: string[] = [];
    for (let i = 0; i < wire.length; i += size) pieces.push(wire.slice(i, i + size));
    assert.deepEqual(parseRequests(...pieces).map((m) => [m.head.path, m.body, m.complete]), whole, `pieces of ${size}`);
  }
});

test('HTTP/1.0 with accept_http_10: close unless keep-alive, the default host, no 100-continue', () => {
  const settings: Http1Settings = { ...HTTP11_ONLY, acceptHttp10: true, defaultHostForHttp10: 'legacy.local' };
  const [plain] = parseRequestsWith(settings, 'GET /a HTTP/1.0\r\n\r\n');
  assert.equal(plain.head.http10, true);
  assert.equal(plain.head.authority, 'legacy.local');
  assert.equal(plain.head.connectionClose, true);
  const [keepAlive] = parseRequestsWith(settings, 'GET /a HTTP/1.0\r\nConnection: Keep-Alive\r\nHost: h\r\n\r\n');
  assert.equal(keepAlive.head.authority, 'h');
  assert.equal(keepAlive.head.connectionClose, false);
  const [expect] = parseRequestsWith(settings, 'PUT /a HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\nx');
  assert.equal(expect.head.expectContinue, false);
  assert.equal(expect.body, 'x');
  // Without a default host a 1.0 request may have no authority: the connection manager answers 400.
  assert.equal(parseRequestsWith({ ...HTTP11_ONLY, acceptHttp10: true }, 'GET / HTTP/1.0\r\n\r\n')[0].head.authority, '');
  // HTTP/1.0 has no Transfer-Encoding: framing faulty (RFC 9112 section 6.1).
  assert.equal(requestError('POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', settings).status, 400);
  assert.equal(requestError('GET / HTTP/1.0\r\n\r\n').status, 426);
});

test('responses llhttp refuses are refused: spaces and bad extensions in chunk lines', () => {
  const head = 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n';
  assert.throws(() => parseResponses(false, `${head}25  \r\nThis is the data in the first chunk\r\n0\r\n\r\n`), CodecError);
  assert.throws(() => parseResponses(false, `${head}5;\r\nhello\r\n0\r\n\r\n`), CodecError);
  assert.throws(() => parseResponses(false, `${head}5;a="b\r\nhello\r\n0\r\n\r\n`), CodecError);
  assert.equal(parseResponses(false, `${head}5;a="b"\r\nhello\r\n0\r\n\r\n`).messages[0].body, 'hello');
  assert.throws(() => parseResponses(false, 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n'), CodecError);
  assert.throws(() => parseResponses(false, 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\xa0\r\n\r\n'), CodecError);
});

test('response transfer codings: kept for the client; a final one other than chunked reads to the close', () => {
  const gzip = parseResponses(false, 'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nbinary');
  assert.equal(gzip.messages[0].head.bodyLength, BODY_UNTIL_CLOSE);
  assert.equal(gzip.messages[0].head.transferCodings, 'gzip');
  assert.equal(gzip.messages[0].head.chunked, false);
  assert.equal(gzip.messages[0].head.connectionClose, true);
  gzip.parser.finish();
  assert.equal(gzip.messages[0].body, 'binary');

  const both = parseResponses(false, 'HTTP/1.1 200 OK\r\nTransfer-Encoding: GZip, Chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n').messages[0];
  assert.equal(both.head.bodyLength, BODY_CHUNKED);
  assert.equal(both.head.transferCodings, 'GZip');
  assert.equal(both.body, 'ab');

  // Transfer-Encoding wins over Content-Length, and the connection is not used again.
  const withLength = parseResponses(false, 'HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n').messages[0];
  assert.equal(withLength.body, 'ab');
  assert.equal(withLength.complete, true);
  assert.equal(withLength.head.connectionClose, true);

  const later = parseResponses(false, 'HTTP/1.2 200 OK\r\nContent-Length: 0\r\n\r\n').messages[0];
  assert.equal(later.head.http10, false);
  assert.equal(later.complete, true);
});

test('max_headers_count: more header lines than the limit is 431', () => {
  const settings: Http1Settings = { ...HTTP11_ONLY, maxHeadersCount: 3 };
  const [m] = parseRequestsWith(settings, `GET / HTTP/1.1\r\nHost: h\r\n${'X: y\r\n'.repeat(2)}\r\n`);
  assert.deepEqual(m.head.headers, ['x', 'y', 'x', 'y']);
  const error = requestError(`GET / HTTP/1.1\r\nHost: h\r\n${'X: y\r\n'.repeat(3)}\r\n`, settings);
  assert.equal(error.status, 431);
  assert.equal(error.details, 'http1.too_many_headers');
});

test('headers_with_underscores_action: ALLOW keeps, DROP_HEADER removes and counts, REJECT_REQUEST is 400', () => {
  const wire = 'GET / HTTP/1.1\r\nHost: h\r\nX_One: 1\r\nX-Two: 2\r\nx_three: 3\r\n\r\n';
  assert.deepEqual(parseRequests(wire)[0].head.headers, ['x_one', '1', 'x-two', '2', 'x_three', '3']);

  const dropStats = codecStats();
  const [dropped] = parseRequestsCounted({ ...HTTP11_ONLY, headersWithUnderscoresAction: 'DROP_HEADER' }, dropStats, wire);
  assert.deepEqual(dropped.head.headers, ['x-two', '2']);
  assert.equal(dropStats.dropped_headers_with_underscores.value(), 2);
  // Dropped headers do not count against max_headers_count, as in Envoy.
  const tight: Http1Settings = { ...HTTP11_ONLY, headersWithUnderscoresAction: 'DROP_HEADER', maxHeadersCount: 2 };
  assert.deepEqual(parseRequestsWith(tight, wire)[0].head.headers, ['x-two', '2']);
  assert.equal(requestError('GET / HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 2\r\n\r\n', tight).status, 431);

  const rejectStats = codecStats();
  const reject: Http1Settings = { ...HTTP11_ONLY, headersWithUnderscoresAction: 'REJECT_REQUEST' };
  assert.throws(
    () => parseRequestsCounted(reject, rejectStats, wire),
    (e) => e instanceof CodecError && e.status === 400 && e.details === 'http1.unexpected_underscore',
  );
  assert.equal(rejectStats.requests_rejected_with_underscores_in_headers.value(), 1);
  assert.deepEqual(parseRequestsCounted(reject, rejectStats, 'GET / HTTP/1.1\r\nHost: h\r\nX-Ok: 1\r\n\r\n')[0].head.headers, ['x-ok', '1']);
  assert.equal(rejectStats.requests_rejected_with_underscores_in_headers.value(), 1);
});

test('a body is framed as its head came, whatever the head callback makes of the head', () => {
  // What a filter does to a head it reframes for the other side (a compressor, gRPC-Web).
  class Reframing<H extends MessageHead> extends Recorder<H> {
    override onMessageHead(head: H): void {
      super.onMessageHead(head);
      head.contentLength = -1;
      head.bodyLength = head.bodyLength === BODY_CHUNKED ? 5 : BODY_CHUNKED;
    }
  }
  const responses = new Reframing<ResponseHead>();
  const responseParser = new ResponseParser(responses, 100);
  responseParser.expectResponse('GET', false);
  responseParser.execute(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello', 'latin1'));
  assert.deepEqual(responses.messages.map((m) => [m.body, m.complete]), [['hello', true]]);
  const requests = new Reframing<RequestHead>();
  const requestParser = new RequestParser(requests, HTTP11_ONLY, codecStats());
  requestParser.execute(Buffer.from('POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n', 'latin1'));
  assert.deepEqual(requests.messages.map((m) => [m.body, m.complete]), [['abc', true]]);
});
