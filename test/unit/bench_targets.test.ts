import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CPU_TARGETS, formatTargets, judgeTargets, type MeasuredRow } from '../../bench/targets';

const row = (group: string, subject: MeasuredRow['subject'], cpuPerRequest: number | null, p50Us: number | null = null, p99Us: number | null = null): MeasuredRow => ({
  group,
  subject,
  cpuPerRequest,
  p50Us,
  p99Us,
});

test('each CPU target reads its own row: met at or under its limit, not met over it, not measured without it', () => {
  const outcomes = judgeTargets([
    row('http', 'proxy', 1.1),
    row('http', 'proxy-features', 1.5),
    row('http-16k', 'proxy-features', 2.31),
    row('tcp', 'proxy', null),
  ]);
  assert.deepEqual(
    outcomes.slice(0, 5).map((o) => [o.measured, o.met]),
    [
      ['1.50x', true],
      ['2.31x', false],
      ['-', null],
      ['-', null],
      ['-', null],
    ],
  );
});

test("the paced load's targets: the p50 our hop adds against nginx's, and p99 against nginx's", () => {
  const paced = (nginxP50: number, proxyP50: number, proxyP99: number) =>
    judgeTargets([row('http-paced', 'direct', null, 300, 900), row('http-paced', 'nginx', 1, nginxP50, 1_000), row('http-paced', 'proxy', 2, proxyP50, proxyP99)]).slice(5);
  assert.deepEqual(
    paced(400, 480, 1_500).map((o) => [o.measured, o.met]),
    [
      ['+0.080 ms', true],
      ['1.50x', true],
    ],
  );
  assert.deepEqual(
    paced(400, 550, 1_600).map((o) => [o.measured, o.met]),
    [
      ['+0.150 ms', false],
      ['1.60x', false],
    ],
  );
  assert.deepEqual(
    judgeTargets([row('http-paced', 'nginx', 1, 400, 1_000)]).slice(5).map((o) => o.met),
    [null, null],
  );
});

test('the table: one line per target, its limit and verdict', () => {
  const text = formatTargets(judgeTargets([row('http', 'proxy-features', 1.91)]));
  const lines = text.split('\n');
  assert.equal(lines[0], 'The targets (ours against nginx doing the same, in this run)');
  assert.match(lines[1]!, /^ {2}target +measured +at most +verdict$/);
  assert.match(lines[2]!, /^ {2}HTTP\/1\.1 13 B, operator's features: CPU vs nginx +1\.91x +1\.50x +not met$/);
  assert.match(lines[8]!, /^ {2}paced load: p99 vs nginx +- +1\.50x +not measured$/);
  assert.equal(lines.length, 9);
});

test('the CPU targets are the L7 features rows at 1.5x, L4 at 1.2x, HTTP/2 and TLS at 2x', () => {
  assert.deepEqual(
    CPU_TARGETS.map((t) => `${t.group}/${t.subject}<=${t.limit}`),
    ['http/proxy-features<=1.5', 'http-16k/proxy-features<=1.5', 'tcp/proxy<=1.2', 'h2/proxy<=2', 'tls/proxy<=2'],
  );
});
