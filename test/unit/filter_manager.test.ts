// The filter chain's iteration: what goes on, what is held and in which order it goes on later,
// for scripted filters between a recording router and codec.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RequestHead, ResponseHead } from '../../src/http/message';
import type { TrustedClient } from '../../src/http/trusted_client';
import { FilterDataStatus, FilterHeadersStatus, type HttpFilter, type HttpFilterCallbacks, type RouteEntry } from '../../src/filters/http/http_filter';
import { type FilteredStream, FilterManager } from '../../src/filters/network/http_connection_manager/filter_manager';
import type { DownstreamConnectionInfo } from '../../src/stream_info/stream_info';

/** The stream's ends, recording what reaches them. */
class Ends implements FilteredStream {
  readonly info = null;
  readonly protocol = 'http1' as const;
  readonly events: string[] = [];
  manager: FilterManager | null = null;
  readonly streamId = 7;

  route(): RouteEntry | null {
    return null;
  }
  trustedClient(): TrustedClient {
    return { ip: '127.0.0.1', port: 0, internal: true, edge: false };
  }
  clearRouteCache(): void {
    this.events.push('route cleared');
  }
  connectionInfo(): DownstreamConnectionInfo {
    return { id: 1, localAddress: '127.0.0.1:80', directRemoteAddress: '127.0.0.1:5000', requestedServerName: null, ssl: null };
  }
  startTime(): number {
    return 0;
  }
  sendLocalReply(status: number): void {
    this.events.push(`reply ${status}`);
    // As the connection manager: a local reply before the response ends the stream.
    this.manager!.reset();
  }
  forwardHeaders(head: RequestHead, endStream: boolean): void {
    this.events.push(`router head ${head.path}${endStream ? ' end' : ''}`);
  }
  forwardData(chunk: Buffer): void {
    this.events.push(`router data ${chunk.toString()}`);
  }
  forwardEnd(trailers: string[] | null): void {
    this.events.push(`router end${trailers === null ? '' : ` ${trailers.join(':')}`}`);
  }
  writeHeaders(head: ResponseHead, endStream: boolean): void {
    this.events.push(`codec head ${head.status} ${head.headers.join(',')}${endStream ? ' end' : ''}`);
  }
  writeData(chunk: Buffer): void {
    this.events.push(`codec data ${chunk.toString()}`);
  }
  writeEnd(): void {
    this.events.push('codec end');
  }
  onDecodingResumed(): void {
    this.events.push('router flush');
  }
  onEncodingResumed(): void {
    this.events.push('codec flush');
  }
  onEncoderFilterWatermark(above: boolean): void {
    this.events.push(above ? 'backed up' : 'drained');
  }
  onBufferOverflow(decoding: boolean): void {
    this.events.push(`overflow ${decoding ? 'request' : 'response'}`);
  }
}

/** A filter whose answers come from its script; it records what it saw and keeps its callbacks. */
class Scripted implements HttpFilter {
  callbacks!: HttpFilterCallbacks;
  headers = FilterHeadersStatus.Continue;
  data = FilterDataStatus.Continue;
  end = FilterHeadersStatus.Continue;
  /** Runs inside decodeData before it answers. */
  onData: ((chunk: Buffer) => void) | null = null;
  ended = 0;

  constructor(
    private readonly name: string,
    private readonly seen: string[],
  ) {}

  decodeHeaders(): FilterHeadersStatus {
    this.seen.push(`${this.name} head`);
    return this.headers;
  }
  decodeData(chunk: Buffer): FilterDataStatus {
    this.seen.push(`${this.name} data ${chunk.toString()}`);
    this.onData?.(chunk);
    return this.data;
  }
  decodeComplete(): FilterHeadersStatus {
    this.seen.push(`${this.name} end`);
    return this.end;
  }
  encodeHeaders(head: ResponseHead): FilterHeadersStatus {
    head.headers.push('x-by', this.name);
    return FilterHeadersStatus.Continue;
  }
  onStreamEnd(): void {
    this.ended++;
  }
}

function chain(names: readonly string[], limit = 1024): { ends: Ends; filters: Scripted[]; manager: FilterManager } {
  const ends = new Ends();
  const filters = names.map((name) => new Scripted(name, ends.events));
  const manager = new FilterManager(
    filters.map((filter) => ({
      createFilter(callbacks: HttpFilterCallbacks): HttpFilter {
        filter.callbacks = callbacks;
        return filter;
      },
    })),
    ends,
    limit,
  );
  ends.manager = manager;
  manager.reset();
  return { ends, filters, manager };
}

const head = (): RequestHead => new RequestHead('POST', '/p', false);

test('frames every filter lets go on reach the router in order', () => {
  const { ends, manager } = chain(['a', 'b']);
  manager.decodeHeaders(head(), false);
  manager.decodeData(Buffer.from('x'));
  manager.decodeEnd(['t', '1']);
  assert.deepEqual(ends.events, ['a head', 'b head', 'router head /p', 'a data x', 'b data x', 'router data x', 'a end', 'b end', 'router end t:1']);
});

test('a stopped head holds the body behind it; continuing lets head, body (as one chunk) and end go on', () => {
  const { ends, filters, manager } = chain(['a', 'b']);
  filters[0].headers = FilterHeadersStatus.StopIteration;
  filters[0].data = FilterDataStatus.StopIterationAndBuffer;
  filters[0].end = FilterHeadersStatus.StopIteration;
  manager.decodeHeaders(head(), false);
  manager.decodeData(Buffer.from('x'));
  manager.decodeData(Buffer.from('y'));
  manager.decodeEnd(null);
  assert.deepEqual(ends.events, ['a head', 'a data x', 'a data y', 'a end']);
  assert.equal(filters[0].callbacks.decodingBuffer().toString(), 'xy');
  ends.events.length = 0;
  filters[0].callbacks.continueDecoding();
  assert.deepEqual(ends.events, ['b head', 'router head /p', 'b data xy', 'router data xy', 'b end', 'router end', 'router flush']);
});

test('a held head goes on when the filter continues a body chunk', () => {
  const { ends, filters, manager } = chain(['a']);
  filters[0].headers = FilterHeadersStatus.StopIteration;
  manager.decodeHeaders(head(), false);
  manager.decodeData(Buffer.from('x'));
  assert.deepEqual(ends.events, ['a head', 'a data x', 'router head /p', 'router data x']);
});

test('two filters holding at once keep the order of what they let go', () => {
  const { ends, filters, manager } = chain(['a', 'b']);
  filters[1].headers = FilterHeadersStatus.StopIteration;
  filters[1].data = FilterDataStatus.StopIterationAndBuffer;
  filters[1].end = FilterHeadersStatus.StopIteration;
  manager.decodeHeaders(head(), false);
  filters[0].data = FilterDataStatus.StopIterationAndBuffer;
  filters[0].end = FilterHeadersStatus.StopIteration;
  manager.decodeData(Buffer.from('x'));
  manager.decodeEnd(null);
  ends.events.length = 0;
  filters[1].callbacks.continueDecoding();
  // b had nothing but the head: the rest is still a's.
  assert.deepEqual(ends.events, ['router head /p', 'router flush']);
  ends.events.length = 0;
  filters[1].data = FilterDataStatus.Continue;
  filters[1].end = FilterHeadersStatus.Continue;
  filters[0].callbacks.continueDecoding();
  assert.deepEqual(ends.events, ['b data x', 'router data x', 'b end', 'router end', 'router flush']);
});

test('a filter that takes chunks may pass others on in their place', () => {
  const { ends, filters, manager } = chain(['a', 'b']);
  filters[0].data = FilterDataStatus.StopIterationNoBuffer;
  filters[0].end = FilterHeadersStatus.Continue;
  filters[0].onData = (chunk) => filters[0].callbacks.injectDecodedData(Buffer.from(chunk.toString().toUpperCase()));
  manager.decodeHeaders(head(), false);
  manager.decodeData(Buffer.from('x'));
  manager.decodeEnd(null);
  assert.deepEqual(ends.events, ['a head', 'b head', 'router head /p', 'a data x', 'b data X', 'router data X', 'a end', 'b end', 'router end']);
});

test('continuing inside its own callback is as good as answering Continue', () => {
  const { ends, filters, manager } = chain(['a']);
  filters[0].data = FilterDataStatus.StopIterationAndBuffer;
  filters[0].onData = () => filters[0].callbacks.continueDecoding();
  manager.decodeHeaders(head(), false);
  manager.decodeData(Buffer.from('x'));
  assert.deepEqual(ends.events, ['a head', 'router head /p', 'a data x', 'router data x']);
});

test('holding more body than the limit is an overflow', () => {
  const { ends, filters, manager } = chain(['a'], 3);
  filters[0].data = FilterDataStatus.StopIterationAndBuffer;
  manager.decodeHeaders(head(), false);
  manager.decodeData(Buffer.from('abc'));
  assert.ok(!ends.events.includes('overflow request'));
  manager.decodeData(Buffer.from('d'));
  assert.ok(ends.events.includes('overflow request'));
});

test('a filter continuing after its stream ended changes nothing, and it was told the stream ended', () => {
  const { ends, filters, manager } = chain(['a']);
  filters[0].headers = FilterHeadersStatus.StopIteration;
  manager.decodeHeaders(head(), true);
  manager.reset();
  assert.equal(filters[0].ended, 1);
  // The next request begins; the first one's late answer must not release it.
  manager.decodeHeaders(head(), true);
  ends.events.length = 0;
  manager.reset();
  filters[0].callbacks.continueDecoding();
  assert.deepEqual(ends.events, []);
});

test('a local reply from a filter stops the iteration', () => {
  const { ends, filters, manager } = chain(['a', 'b']);
  filters[0].headers = FilterHeadersStatus.StopIteration;
  filters[0].data = FilterDataStatus.Continue;
  filters[0].onData = () => filters[0].callbacks.sendLocalReply(403, '');
  manager.decodeHeaders(head(), false);
  manager.decodeData(Buffer.from('x'));
  assert.deepEqual(ends.events, ['a head', 'a data x', 'reply 403']);
});

test('the response goes through the filters that saw the request, last first', () => {
  const { ends, filters, manager } = chain(['a', 'b', 'c']);
  filters[1].headers = FilterHeadersStatus.StopIteration;
  manager.decodeHeaders(head(), true);
  ends.events.length = 0;
  manager.encodeHeaders(new ResponseHead(200, false), false);
  manager.encodeData(Buffer.from('r'));
  manager.encodeEnd(null);
  // c never saw the request.
  assert.deepEqual(ends.events, ['codec head 200 x-by,b,x-by,a', 'codec data r', 'codec end']);
});

test('body injected while the filter holds the end goes out before it', () => {
  const { ends, filters, manager } = chain(['a']);
  filters[0].data = FilterDataStatus.StopIterationNoBuffer;
  filters[0].end = FilterHeadersStatus.StopIteration;
  manager.decodeHeaders(head(), false);
  manager.decodeData(Buffer.from('x'));
  manager.decodeEnd(null);
  filters[0].callbacks.injectDecodedData(Buffer.from('late'));
  filters[0].callbacks.continueDecoding();
  assert.deepEqual(ends.events.slice(-3), ['router data late', 'router end', 'router flush']);
});

test("a filter reads the downstream protocol and sets its own buffer limit for the stream's request", () => {
  const { ends, filters, manager } = chain(['a'], 4);
  assert.equal(filters[0].callbacks.downstream.protocol, 'http1');
  filters[0].headers = FilterHeadersStatus.StopIteration;
  filters[0].data = FilterDataStatus.StopIterationAndBuffer;
  manager.decodeHeaders(head(), false);
  filters[0].callbacks.setDecoderBufferLimit(8);
  manager.decodeData(Buffer.from('12345678'));
  assert.deepEqual(ends.events, ['a head', 'a data 12345678']);
  manager.decodeData(Buffer.from('9'));
  assert.deepEqual(ends.events.slice(-1), ['overflow request']);
  // A new stream starts at the listener's limit again.
  manager.reset();
  ends.events.length = 0;
  manager.decodeHeaders(head(), false);
  manager.decodeData(Buffer.from('12345'));
  assert.deepEqual(ends.events.slice(-1), ['overflow request']);
});

test('the chain says whether a filter may make a request gRPC (local replies then look at the request as it came)', () => {
  const plain = chain(['a', 'b']);
  assert.equal(plain.manager.makesGrpcRequests, false);
  const ends = new Ends();
  const filter = new Scripted('web', ends.events);
  const manager = new FilterManager([{ createFilter: () => filter }, { createFilter: () => filter, makesGrpcRequests: true }], ends, 1024);
  assert.equal(manager.makesGrpcRequests, true);
});

test("a filter clears the route of the stream it serves, not of a later one; it reads the stream's downstream facts", () => {
  const { ends, filters, manager } = chain(['a']);
  filters[0].headers = FilterHeadersStatus.StopIteration;
  manager.decodeHeaders(head(), true);
  const callbacks = filters[0].callbacks;
  assert.deepEqual([callbacks.downstream.streamId, callbacks.downstream.protocol, callbacks.downstream.connectionInfo().localAddress], [7, 'http1', '127.0.0.1:80']);
  callbacks.clearRouteCache();
  manager.reset();
  callbacks.clearRouteCache();
  assert.deepEqual(ends.events, ['a head', 'route cleared']);
});
