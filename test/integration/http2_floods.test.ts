// HTTP/2 flood attacks against the proxy binary, one per limit: Envoy 1.16's
// http2_protocol_options (outbound frames, outbound control frames, empty frames, PRIORITY,
// WINDOW_UPDATE) and the proxy's own (rapid reset, CONTINUATION). Each attacker is a raw socket
// writing frames by hand; each test asserts the flood's counter, the attacker's connection
// closed, another HTTP/2 client served meanwhile, and the worker's memory bounded.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http2 from 'node:http2';
import type { ServerResponse } from 'node:http';
import * as net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { httpListener, localCluster } from '../helpers/config_fixtures';
import { startUpstream, type Upstream } from '../helpers/http_peers';
import {
  CLIENT_PREFACE,
  FLAG,
  frame,
  framesOf,
  getRequest,
  getRequestBlock,
  goAwayCode,
  ping,
  priority,
  rstStream,
  settings,
  TYPE,
  windowUpdate,
} from '../helpers/http2_frames';
import { type RunningProxy, startProxy, waitFor } from '../helpers/proxy_process';

const ENHANCE_YOUR_CALM = 0xb;
const CLOSE_WITHIN_MS = 10_000;
/**
 * What a worker may grow by under one attack. The outbound flood's thousands of requests leave
 * some 40-60 MiB of garbage; a queue without a limit would hold the 32 MiB body and more.
 */
const RSS_GROWTH_BOUND_KB = 128 * 1024;
/** SETTINGS_INITIAL_WINDOW_SIZE, and the largest window. */
const INITIAL_WINDOW_SIZE = 4;
const MAX_WINDOW = 2 ** 31 - 1;
/** More than the kernel buffers on both sides of a loopback connection and the proxy's 1 MiB buffer limit. */
const BIG_BODY = 32 * 1024 * 1024;
const BIG_CHUNK = Buffer.alloc(64 * 1024);

/** A client that writes what it likes and reads only when told: what came back, and its close. */
class Attacker {
  readonly socket: net.Socket;
  private readonly chunks: Buffer[] = [];
  readonly closed: Promise<void>;
  private readonly ready: Promise<void>;

  constructor(port: number, reading: boolean) {
    this.socket = net.connect(port, '127.0.0.1');
    this.ready = new Promise((resolve) => this.socket.once('connect', resolve));
    this.socket.on('error', () => undefined);
    this.socket.on('data', (c: Buffer) => this.chunks.push(c));
    if (!reading) this.socket.pause();
    this.closed = new Promise((resolve) => this.socket.once('close', () => resolve()));
  }

  async send(...wire: Buffer[]): Promise<void> {
    await this.ready;
    this.socket.write(Buffer.concat(wire));
  }

  /** The whole frames received so far. */
  frames(): ReturnType<typeof framesOf> {
    return framesOf(Buffer.concat(this.chunks));
  }

  /** Reads what is left and waits for the proxy's close; the frames it sent. */
  async untilClosed(): Promise<ReturnType<typeof framesOf>> {
    this.socket.resume();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the attacker's connection still open after ${CLOSE_WITHIN_MS} ms`)), CLOSE_WITHIN_MS);
    });
    try {
      await Promise.race([this.closed, late]);
    } finally {
      clearTimeout(timer);
      this.socket.destroy();
    }
    return this.frames();
  }
}

function repeat(n: number, make: (i: number) => Buffer): Buffer {
  return Buffer.concat(Array.from({ length: n }, (_, i) => make(i)));
}

describe('HTTP/2 flood protections through the proxy binary', { timeout: 180_000 }, () => {
  let upstream: Upstream;
  let proxy: RunningProxy;
  let port: number;
  let tightPort: number;
  let workerPid: number;
  /** The upstream's /big responses: chunks written, and whether the last one waits for the proxy to read. */
  const big = { written: 0, waiting: false };

  function writeBig(res: ServerResponse): void {
    let left = BIG_BODY / BIG_CHUNK.length;
    const more = (): void => {
      big.waiting = false;
      while (left > 0) {
        left--;
        big.written++;
        if (!res.write(BIG_CHUNK)) {
          big.waiting = true;
          res.once('drain', more);
          return;
        }
      }
      res.end();
    };
    more();
  }

  function rssKb(): number {
    const status = fs.readFileSync(`/proc/${workerPid}/status`, 'utf8');
    return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)![1]);
  }

  async function stat(name: string): Promise<number> {
    return (await proxy.stat(name)) ?? 0;
  }

  /** The worker counts as it closes: the client can see the close a moment before the count. */
  async function assertStat(name: string, expected: number): Promise<void> {
    const reached = await waitFor(name, async () => ((await stat(name)) === expected ? true : undefined), 5000).catch(() => false);
    if (!reached) assert.equal(await stat(name), expected, name);
  }

  /** An ordinary HTTP/2 client's GET over a connection of its own: its status. */
  async function served(at = port, path = '/'): Promise<number> {
    const session = http2.connect(`http://127.0.0.1:${at}`);
    session.on('error', () => undefined);
    try {
      return await new Promise<number>((resolve, reject) => {
        const stream = session.request({ ':path': path });
        stream.on('response', (headers) => resolve(Number(headers[':status'])));
        stream.on('error', reject);
        stream.resume();
      });
    } finally {
      session.destroy();
    }
  }

  /**
   * Runs `attack` with another client served meanwhile; then the counter went up by one, the
   * worker did not restart and its memory stayed bounded. Returns the frames the attacker got.
   */
  async function underAttack(counter: string, attacker: Attacker, attack: () => Promise<void>): Promise<ReturnType<typeof framesOf>> {
    const before = await stat(`http2.${counter}`);
    const protocolErrors = await stat('http.ingress_http.downstream_cx_protocol_error');
    const startRssKb = rssKb();
    const attacking = attack();
    assert.equal(await served(), 200, 'another client is served during the attack');
    await attacking;
    await assertStat(`http2.${counter}`, before + 1);
    const frames = await attacker.untilClosed();
    assert.equal(await served(), 200, 'another client is served after the attack');
    assert.equal(await stat('server.worker_restarts'), 0);
    // A flood is not counted as a protocol error, as in Envoy.
    assert.equal(await stat('http.ingress_http.downstream_cx_protocol_error'), protocolErrors);
    const growth = rssKb() - startRssKb;
    assert.ok(growth < RSS_GROWTH_BOUND_KB, `the worker grew by ${growth} kB`);
    return frames;
  }

  before(async () => {
    upstream = await startUpstream('web', (req, res) => {
      if (req.url === '/big') writeBig(res);
      else res.end('ok');
    });
    const routes = [
      { match: { prefix: '/direct' }, direct_response: { status: 200, body: { inline_string: 'ok' } } },
      { match: { prefix: '/' }, route: { cluster: 'web' } },
    ];
    const tight = { stat_prefix: 'tight', http2_protocol_options: { max_consecutive_inbound_frames_with_empty_payload: 5, max_inbound_priority_frames_per_stream: 0 } };
    proxy = await startProxy({ static_resources: { listeners: [httpListener('h2_in', 0, routes), httpListener('tight_in', 0, routes, tight)], clusters: [localCluster('web', upstream.port)] } });
    port = await proxy.listenerPort('h2_in');
    tightPort = await proxy.listenerPort('tight_in');
    const workers = proxy.groupPids().filter((pid) => pid !== proxy.pid);
    assert.equal(workers.length, 1);
    workerPid = workers[0];
    // The baseline after the code paths have run once.
    for (let i = 0; i < 3; i++) assert.equal(await served(), 200);

  });

  after(async () => {
    await proxy?.cleanup();
    await upstream?.close();
  });

  test('empty DATA frames without END_STREAM: inbound_empty_frames_flood, GOAWAY ENHANCE_YOUR_CALM', async () => {
    const rxResets = await stat('http2.rx_reset');
    const cutShort = await stat('http.ingress_http.downstream_cx_destroy_active_rq');
    const attacker = new Attacker(port, true);
    // A request whose body is still to come, then nothing but empty DATA frames for it.
    const opened = await stat('http.ingress_http.downstream_rq_http2_total');
    await attacker.send(CLIENT_PREFACE, settings(), frame(TYPE.HEADERS, FLAG.END_HEADERS, 1, getRequestBlock()));
    await waitFor('the request open', async () => ((await stat('http.ingress_http.downstream_rq_http2_total')) > opened ? true : undefined));
    const frames = await underAttack('inbound_empty_frames_flood', attacker, () => attacker.send(repeat(10_000, () => frame(TYPE.DATA, 0, 1))));
    assert.equal(goAwayCode(frames), ENHANCE_YOUR_CALM);
    // The stream the close cut short ends as a connection termination, not as a client's reset.
    assert.equal(await stat('http2.rx_reset'), rxResets);
    assert.equal(await stat('http.ingress_http.downstream_cx_destroy_active_rq'), cutShort + 1);
  });

  test('max_consecutive_inbound_frames_with_empty_payload set: that many pass, one more closes', async () => {
    const patient = new Attacker(tightPort, true);
    const opening = [CLIENT_PREFACE, settings(), frame(TYPE.HEADERS, FLAG.END_HEADERS, 1, getRequestBlock())];
    await patient.send(...opening, repeat(5, () => frame(TYPE.DATA, 0, 1)), frame(TYPE.DATA, FLAG.END_STREAM, 1, Buffer.from('x')));
    // The stream goes through: its response comes back and the connection stays.
    await waitFor('the response', () => (patient.frames().some((f) => f.type === TYPE.HEADERS) ? true : undefined));
    const before = await stat('http2.inbound_empty_frames_flood');
    await patient.send(frame(TYPE.HEADERS, FLAG.END_HEADERS, 3, getRequestBlock()), repeat(6, () => frame(TYPE.DATA, 0, 3)));
    await assertStat('http2.inbound_empty_frames_flood', before + 1);
    assert.equal(goAwayCode(await patient.untilClosed()), ENHANCE_YOUR_CALM);
  });

  test('PRIORITY frames: inbound_priority_frames_flood past max_inbound_priority_frames_per_stream per stream opened', async () => {
    const attacker = new Attacker(port, true);
    const frames = await underAttack('inbound_priority_frames_flood', attacker, () =>
      attacker.send(CLIENT_PREFACE, settings(), getRequest(1), repeat(10_000, (i) => priority(2 * i + 3))),
    );
    assert.equal(goAwayCode(frames), ENHANCE_YOUR_CALM);
    // Set to 0, the first PRIORITY frame is one too many.
    const before = await stat('http2.inbound_priority_frames_flood');
    const strict = new Attacker(tightPort, true);
    await strict.send(CLIENT_PREFACE, settings(), priority(3));
    await assertStat('http2.inbound_priority_frames_flood', before + 1);
    assert.equal(goAwayCode(await strict.untilClosed()), ENHANCE_YOUR_CALM);
  });

  test('WINDOW_UPDATE frames with no DATA sent for them: inbound_window_update_frames_flood', async () => {
    const attacker = new Attacker(port, true);
    const frames = await underAttack('inbound_window_update_frames_flood', attacker, () =>
      attacker.send(CLIENT_PREFACE, settings(), repeat(10_000, () => windowUpdate(0, 1))),
    );
    assert.equal(goAwayCode(frames), ENHANCE_YOUR_CALM);
  });

  /**
   * A client that reads nothing, its windows wide open, asks for a body larger than the kernel's
   * buffers and the proxy's buffer limit: from then on what the proxy writes it waits in its queue.
   */
  async function stalledClient(): Promise<{ attacker: Attacker; nextStream: () => number }> {
    const attacker = new Attacker(port, false);
    await attacker.send(CLIENT_PREFACE, settings([[INITIAL_WINDOW_SIZE, MAX_WINDOW]]), windowUpdate(0, MAX_WINDOW - 65535), getRequest(1, '/big'));
    // Every buffer on the way is full once the proxy stops reading the upstream: the upstream
    // waits to write and writes nothing more.
    let written = -1;
    await waitFor('the proxy to stop reading the body', async () => {
      const stalled = big.waiting && big.written === written;
      written = big.written;
      if (!stalled) await new Promise((resolve) => setTimeout(resolve, 300));
      return stalled ? true : undefined;
    });
    let next = 3;
    return { attacker, nextStream: () => (next += 2) - 2 };
  }

  /** Sends `batch()` until `counter` moves, at most `rounds` times, checking every 10. */
  async function until(counter: string, rounds: number, batch: () => Buffer, attacker: Attacker): Promise<void> {
    for (let i = 0; i < rounds; i++) {
      if (i % 10 === 0 && (await stat(`http2.${counter}`)) > 0) return;
      await attacker.send(batch());
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  test('PINGs from a client that reads nothing: outbound_control_flood once the ACKs pile up, the connection closed at once', async () => {
    const { attacker } = await stalledClient();
    const frames = await underAttack('outbound_control_flood', attacker, () => until('outbound_control_flood', 4000, () => repeat(500, ping), attacker));
    // Closed without flushing: no GOAWAY behind the queue.
    assert.equal(goAwayCode(frames), null);
  });

  test('requests from a client that reads nothing: outbound_flood once the responses pile up', async () => {
    const { attacker, nextStream } = await stalledClient();
    const frames = await underAttack('outbound_flood', attacker, () => until('outbound_flood', 4000, () => repeat(200, () => getRequest(nextStream(), '/direct')), attacker));
    assert.equal(goAwayCode(frames), null);
  });

  test('rapid reset (CVE-2023-44487): streams opened and reset at once, inbound_rst_stream_frames_flood', async () => {
    const attacker = new Attacker(port, true);
    const frames = await underAttack('inbound_rst_stream_frames_flood', attacker, () =>
      attacker.send(CLIENT_PREFACE, settings(), repeat(2000, (i) => Buffer.concat([frame(TYPE.HEADERS, FLAG.END_HEADERS, 2 * i + 1, getRequestBlock()), rstStream(2 * i + 1)]))),
    );
    assert.equal(goAwayCode(frames), ENHANCE_YOUR_CALM);
  });

  test('a header block in endless CONTINUATION frames: inbound_continuation_frames_flood', async () => {
    const attacker = new Attacker(port, true);
    const field = Buffer.from([0x00, 1, 0x78, 4, 0x61, 0x61, 0x61, 0x61]);
    const frames = await underAttack('inbound_continuation_frames_flood', attacker, () =>
      attacker.send(CLIENT_PREFACE, settings(), frame(TYPE.HEADERS, 0, 1, getRequestBlock()), repeat(10_000, () => frame(TYPE.CONTINUATION, 0, 1, field))),
    );
    assert.equal(goAwayCode(frames), ENHANCE_YOUR_CALM);
  });
});
