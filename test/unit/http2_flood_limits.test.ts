// The counting under the HTTP/2 flood limits: frame headers found in bytes cut anywhere, and
// Envoy 1.16's rules (and the proxy's two own) over the frames found.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FrameScanner, type FrameVisitor } from '../../src/http/http2/frame_scanner';
import { isControlFrame, MAX_CONTINUATION_FRAMES, MAX_INBOUND_RESETS_PER_WINDOW, ProtocolConstraints, RAPID_RESET_WINDOW_MS } from '../../src/http/http2/protocol_constraints';
import type { Http2FloodLimits } from '../../src/config/model';
import { CLIENT_PREFACE, FLAG, frame, getRequest, ping, priority, rstStream, TYPE, windowUpdate } from '../helpers/http2_frames';

type Seen = [type: number, flags: number, length: number, streamId: number, padding: number];

function collect(stopAfter = Infinity): { visitor: FrameVisitor; seen: Seen[] } {
  const seen: Seen[] = [];
  return {
    seen,
    visitor: {
      onFrame(type, flags, length, streamId, padding) {
        seen.push([type, flags, length, streamId, padding]);
        return seen.length < stopAfter;
      },
    },
  };
}

const PADDED_DATA = frame(TYPE.DATA, FLAG.PADDED, 3, Buffer.from([4, 0, 0, 0, 0]));
const WIRE = Buffer.concat([CLIENT_PREFACE, ping(), getRequest(1), PADDED_DATA, frame(TYPE.DATA, FLAG.END_STREAM, 3, Buffer.from('body')), windowUpdate(0, 10)]);
const EXPECTED: Seen[] = [
  [TYPE.PING, 0, 8, 0, 0],
  [TYPE.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, getRequest(1).length - 9, 1, 0],
  [TYPE.DATA, FLAG.PADDED, 5, 3, 5],
  [TYPE.DATA, FLAG.END_STREAM, 4, 3, 0],
  [TYPE.WINDOW_UPDATE, 0, 4, 0, 0],
];

test('frame headers are found after the preface whatever the cuts, a padded frame with its padding', () => {
  const whole = collect();
  assert.equal(new FrameScanner(CLIENT_PREFACE.length).scan(WIRE, whole.visitor), 5);
  assert.deepEqual(whole.seen, EXPECTED);
  // Every cut in two places, one byte at a time included.
  for (let size = 1; size <= 11; size++) {
    const cut = collect();
    const scanner = new FrameScanner(CLIENT_PREFACE.length);
    let frames = 0;
    for (let at = 0; at < WIRE.length; at += size) frames += scanner.scan(WIRE.subarray(at, at + size), cut.visitor);
    assert.deepEqual(cut.seen, EXPECTED, `chunks of ${size}`);
    assert.equal(frames, 5);
    assert.equal(scanner.atFrameBoundary(), true);
  }
  const partial = new FrameScanner();
  partial.scan(ping().subarray(0, 12), collect().visitor);
  assert.equal(partial.atFrameBoundary(), false);
});

test('the scanner stops where the visitor says', () => {
  const { visitor, seen } = collect(2);
  assert.equal(new FrameScanner(CLIENT_PREFACE.length).scan(WIRE, visitor), 2);
  assert.equal(seen.length, 2);
});

const LIMITS: Http2FloodLimits = {
  maxOutboundFrames: 10,
  maxOutboundControlFrames: 3,
  maxConsecutiveInboundFramesWithEmptyPayload: 1,
  maxInboundPriorityFramesPerStream: 2,
  maxInboundWindowUpdateFramesPerDataFrameSent: 2,
};
const clock = { now: (): number => 0 };

function feed(constraints: ProtocolConstraints, frames: Buffer[], at = clock): (string | null)[] {
  const verdicts: (string | null)[] = [];
  const scanner = new FrameScanner();
  scanner.scan(Buffer.concat(frames), {
    onFrame(type, flags, length, _streamId, padding) {
      verdicts.push(constraints.onInboundFrame(type, flags, length, padding, at));
      return true;
    },
  });
  return verdicts;
}

test('empty HEADERS, CONTINUATION and DATA frames without END_STREAM: more than the limit in a row is a flood; padding counts as empty', () => {
  const emptyData = frame(TYPE.DATA, 0, 1);
  const paddedOnly = frame(TYPE.DATA, FLAG.PADDED, 1, Buffer.from([2, 0, 0]));
  assert.deepEqual(feed(new ProtocolConstraints(LIMITS), [emptyData, paddedOnly]), [null, 'inbound_empty_frames_flood']);
  // A frame with a payload or END_STREAM breaks the run; PING does not.
  const withBody = frame(TYPE.DATA, 0, 1, Buffer.from('x'));
  const ended = frame(TYPE.DATA, FLAG.END_STREAM, 1);
  assert.deepEqual(feed(new ProtocolConstraints(LIMITS), [emptyData, withBody, emptyData, ended, emptyData, ping(), emptyData]), [
    null,
    null,
    null,
    null,
    null,
    null,
    'inbound_empty_frames_flood',
  ]);
  assert.deepEqual(feed(new ProtocolConstraints({ ...LIMITS, maxConsecutiveInboundFramesWithEmptyPayload: 0 }), [frame(TYPE.HEADERS, FLAG.END_HEADERS, 1)]), [
    'inbound_empty_frames_flood',
  ]);
});

test('PRIORITY: the limit per stream times one more than the streams opened', () => {
  const constraints = new ProtocolConstraints(LIMITS);
  assert.deepEqual(feed(constraints, [priority(1), priority(1)]), [null, null]);
  assert.deepEqual(feed(constraints, [getRequest(1), priority(3), priority(3), priority(3)]), [null, null, null, 'inbound_priority_frames_flood']);
});

test('WINDOW_UPDATE: 1 + 2 * (streams opened + the limit * DATA frames sent)', () => {
  const constraints = new ProtocolConstraints(LIMITS);
  assert.deepEqual(feed(constraints, [windowUpdate(0, 1), windowUpdate(0, 1)]), [null, 'inbound_window_update_frames_flood']);
  const served = new ProtocolConstraints(LIMITS);
  assert.equal(served.onOutboundFrames(2, 0, 1), null);
  // 1 + 2 * (1 + 2 * 1) = 7 allowed after one request and one DATA frame sent.
  const verdicts = feed(served, [getRequest(1), ...Array.from({ length: 8 }, () => windowUpdate(0, 1))]);
  assert.deepEqual(verdicts.slice(0, 8), Array(8).fill(null));
  assert.equal(verdicts[8], 'inbound_window_update_frames_flood');
});

test('outbound frames waiting to be written: all of them and the control frames, released as written', () => {
  const constraints = new ProtocolConstraints(LIMITS);
  assert.equal(constraints.onOutboundFrames(3, 3, 0), null);
  assert.equal(constraints.onOutboundFrames(1, 1, 0), 'outbound_control_flood');
  const released = new ProtocolConstraints(LIMITS);
  assert.equal(released.onOutboundFrames(10, 3, 2), null);
  released.releaseOutboundFrames(10, 3);
  assert.equal(released.onOutboundFrames(10, 3, 0), null);
  assert.equal(released.onOutboundFrames(1, 0, 0), 'outbound_flood');
  // PING and SETTINGS count as control frames only as acknowledgements; RST_STREAM always.
  assert.deepEqual(
    [isControlFrame(TYPE.PING, FLAG.ACK), isControlFrame(TYPE.PING, 0), isControlFrame(TYPE.SETTINGS, FLAG.ACK), isControlFrame(TYPE.SETTINGS, 0), isControlFrame(TYPE.RST_STREAM, 0), isControlFrame(TYPE.DATA, 0)],
    [true, false, true, false, true, false],
  );
});

test('rapid reset: more client resets than the limit within the window is a flood; a new window starts over', () => {
  const resets = (n: number): Buffer[] => Array.from({ length: n }, (_, i) => rstStream(2 * i + 1));
  const constraints = new ProtocolConstraints(LIMITS);
  assert.deepEqual(feed(constraints, resets(MAX_INBOUND_RESETS_PER_WINDOW)), Array(MAX_INBOUND_RESETS_PER_WINDOW).fill(null));
  const later = { now: (): number => RAPID_RESET_WINDOW_MS };
  assert.deepEqual(feed(constraints, resets(MAX_INBOUND_RESETS_PER_WINDOW), later), Array(MAX_INBOUND_RESETS_PER_WINDOW).fill(null));
  assert.deepEqual(feed(constraints, resets(1), later), ['inbound_rst_stream_frames_flood']);
});

test('CONTINUATION: a header block in more frames than the limit is a flood; a new HEADERS starts over', () => {
  const block = Buffer.from([0x82]);
  const continuations = (n: number): Buffer[] => Array.from({ length: n }, () => frame(TYPE.CONTINUATION, 0, 1, block));
  const constraints = new ProtocolConstraints(LIMITS);
  const ok = feed(constraints, [frame(TYPE.HEADERS, 0, 1, block), ...continuations(MAX_CONTINUATION_FRAMES - 1), frame(TYPE.CONTINUATION, FLAG.END_HEADERS, 1, block)]);
  assert.deepEqual(ok, Array(MAX_CONTINUATION_FRAMES + 1).fill(null));
  const flood = feed(constraints, [frame(TYPE.HEADERS, 0, 3, block), ...continuations(MAX_CONTINUATION_FRAMES + 1)]);
  assert.equal(flood[MAX_CONTINUATION_FRAMES + 1], 'inbound_continuation_frames_flood');
  assert.deepEqual(flood.slice(0, MAX_CONTINUATION_FRAMES + 1), Array(MAX_CONTINUATION_FRAMES + 1).fill(null));
});
