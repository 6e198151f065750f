import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CPU_TARGETS, formatTargets, judgeTargets } from '../../bench/targets';

test('each target reads its own row: met at or under its limit, not met over it, not measured without it', () => {
  const outcomes = judgeTargets([
    { group: 'http', subject: 'proxy', cpuPerRequest: 1.1 },
    { group: 'http', subject: 'proxy-features', cpuPerRequest: 1.5 },
    { group: 'http-16k', subject: 'proxy-features', cpuPerRequest: 2.31 },
    { group: 'tcp', subject: 'proxy', cpuPerRequest: null },
  ]);
  assert.deepEqual(
    outcomes.map((o) => [o.target.group, o.ratio]),
    [
      ['http', 1.5],
      ['http-16k', 2.31],
      ['tcp', null],
      ['h2', null],
      ['tls', null],
    ],
  );
  assert.equal(
    formatTargets(outcomes),
    [
      'CPU per request against the targets (ours over nginx doing the same)',
      "  target                                CPU vs nginx  at most  verdict",
      "  HTTP/1.1 13 B, operator's features           1.50x    1.50x  met",
      "  HTTP/1.1 16 KiB, operator's features         2.31x    1.50x  not met",
      '  TCP proxy (vs nginx stream)                      -    1.20x  not measured',
      '  HTTP/2 downstream                                -    2.00x  not measured',
      '  TLS termination, keep-alive                      -    2.00x  not measured',
    ].join('\n'),
  );
});

test('the targets are the L7 features rows at 1.5x, L4 at 1.2x, HTTP/2 and TLS at 2x', () => {
  assert.deepEqual(
    CPU_TARGETS.map((t) => `${t.group}/${t.subject}<=${t.limit}`),
    ['http/proxy-features<=1.5', 'http-16k/proxy-features<=1.5', 'tcp/proxy<=1.2', 'h2/proxy<=2', 'tls/proxy<=2'],
  );
});
