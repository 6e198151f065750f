import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CodecError } from '../../src/http/http1/codec_error';
import { BODY_CHUNKED, BODY_UNTIL_CLOSE, type MessageHead, type RequestHead, type ResponseHead } from '../../src/http/http1/message_head';
import type { ParserCallbacks } from '../../src/http/http1/parser';
import { RequestParser } from '../../src/http/http1/request_parser';
import { ResponseParser } from '../../src/http/http1/response_parser';

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

function parseRequests(...pieces: string[]): Message<RequestHead>[] {
  const recorder = new Recorder<RequestHead>();
  const parser = new RequestParser(recorder);
  for (const piece of pieces) parser.execute(Buffer.from(piece, 'latin1'));
  return recorder.messages;
}

function requestError(text: string): CodecError {
  try {
    parseRequests(text);
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

test('pipelined requests wait while paused and follow on resume', () => {
  const recorder = new Recorder<RequestHead>();
  const parser = new RequestParser({
    onMessageHead: (h) => recorder.onMessageHead(h),
    onMessageBody: (c) => recorder.onMessageBody(c),
    onMessageComplete: () => {
      recorder.onMessageComplete();
      parser.pause();
    },
  });
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
  assert.equal(requestError('POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n').status, 501);
  assert.equal(requestError('POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n').status, 400);
  assert.equal(requestError(`GET / HTTP/1.1\r\nX: ${'a'.repeat(61 * 1024)}\r\n\r\n`).status, 431);
  assert.equal(requestError(`GET / HTTP/1.1\r\n${'X: y\r\n'.repeat(101)}\r\n`).status, 431);
});

function parseResponses(headRequest: boolean, ...pieces: string[]): { messages: Message<ResponseHead>[]; parser: ResponseParser } {
  const recorder = new Recorder<ResponseHead>();
  const parser = new ResponseParser(recorder);
  parser.expectResponse(headRequest);
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
