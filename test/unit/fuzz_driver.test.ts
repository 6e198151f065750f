// The fuzzers' driver finds what it is meant to find: an exception is a crash and a slow input
// a hang, each named by the seed and index that reproduce it; an input is the same when made
// alone; corpus inputs run first; an unhealthy target is reported.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type FuzzInput, type FuzzSurface, inputRandom, runSurface } from '../fuzz/driver';

/** A surface whose input is one random byte: a crash on 7, a busy 30 ms on 9 (bound 20 ms). */
function byteSurface(seen: number[], healthy = () => true): FuzzSurface {
  return {
    name: 'driver_self_test',
    timeBoundMs: 20,
    async open() {
      return {
        generate: (random: () => number): FuzzInput => ({ kind: 'bin', bytes: Buffer.from([Math.floor(random() * 10)]) }),
        run(input: FuzzInput) {
          const byte = input.bytes[0]!;
          seen.push(byte);
          if (byte === 7) throw new TypeError('seven');
          if (byte === 9) for (const end = Date.now() + 30; Date.now() < end;);
        },
        async checkHealth() {
          if (!healthy()) throw new Error('unwell');
        },
        async close() {},
      };
    },
  };
}

test('a crash and a hang are found and named by seed:index; reproducing one makes the same input', async () => {
  const seen: number[] = [];
  const result = await runSurface(byteSurface(seen), { seed: 5, inputs: 60, corpus: false, batch: 20 });
  assert.equal(result.generated, 60);
  const crash = result.findings.find((f) => f.kind === 'crash');
  const hang = result.findings.find((f) => f.kind === 'hang');
  assert.ok(crash && /TypeError: seven/.test(crash.message), JSON.stringify(result.findings));
  assert.ok(hang && /bound 20 ms/.test(hang.message));
  const index = Number(crash.input.split(':')[1]);
  assert.equal(crash.input, `5:${index}`);
  assert.equal(seen[index], 7);

  const again: number[] = [];
  const one = await runSurface(byteSurface(again), { seed: 5, inputs: 1, only: index, corpus: false });
  assert.deepEqual(again, [7]);
  assert.equal(one.findings.length, 1);
  assert.equal(one.findings[0]!.input, `5:${index}`);
});

test("an input's random stream depends on its seed and index only", () => {
  const draw = (seed: number, index: number) => Array.from({ length: 4 }, inputRandom(seed, index));
  assert.deepEqual(draw(3, 1000), draw(3, 1000));
  assert.notDeepEqual(draw(3, 1000), draw(3, 1001));
  assert.notDeepEqual(draw(3, 1000), draw(4, 1000));
});

test('an unhealthy target is a finding at the batch it was found after', async () => {
  let runs = 0;
  const result = await runSurface(byteSurface([], () => runs++ < 1), { seed: 1, inputs: 40, corpus: false, batch: 20 });
  const unhealthy = result.findings.filter((f) => f.kind === 'unhealthy');
  assert.deepEqual(unhealthy.map((f) => f.input), ['inputs 1:20 to 1:39']);
});
