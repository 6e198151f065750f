// The fuzzers of `make fuzz`, bounded for `make test`: each surface for a few hundred inputs
// of a fixed seed, plus every regression input of its corpus; any crash, hang or unhealthy
// proxy fails the test with the input to reproduce it by.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runSurface } from '../fuzz/driver';
import { SURFACES } from '../fuzz/surfaces';

const INPUTS = 1500;

for (const surface of SURFACES) {
  test(`${surface.name}: ${INPUTS} fuzzed inputs and the regression corpus, no crash or hang`, { timeout: 60_000 }, async () => {
    const result = await runSurface(surface, { seed: 1, inputs: INPUTS, corpus: true, batch: 200 });
    assert.deepEqual(result.findings, []);
    assert.equal(result.generated, INPUTS);
  });
}
