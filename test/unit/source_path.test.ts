// The path a log line shows for a file (src/log/source_location.ts): tsc's output as its .ts
// source, a bundle and anything else in the checkout as it is, a file outside it in full.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sourcePath } from '../../src/log/source_location';

test("tsc's output is shown as its source; a bundle, other files and node's frames as they are", () => {
  assert.equal(sourcePath('/checkout/dist/src/log/log_manager.js', '/checkout'), 'src/log/log_manager.ts');
  assert.equal(sourcePath('/checkout/dist/test/unit/a.test.js', '/checkout'), 'test/unit/a.test.ts');
  assert.equal(sourcePath('/checkout/dist/bundle/proxy.js', '/checkout'), 'dist/bundle/proxy.js');
  assert.equal(sourcePath('/checkout/src/log/log_manager.ts', '/checkout'), 'src/log/log_manager.ts');
  assert.equal(sourcePath('/elsewhere/x.js', '/checkout'), '/elsewhere/x.js');
  assert.equal(sourcePath('node:internal/timers', '/checkout'), 'node:internal/timers');
});
