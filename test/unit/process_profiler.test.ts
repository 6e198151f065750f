import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { ProcessProfiler, ProfilerStateError, profilePath } from '../../src/server/process_profiler';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-cpuprofile-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

test('each process has its own file of each kind under profile_path', () => {
  assert.equal(profilePath('/var/log/proxy/proxy.prof', 'supervisor', 'cpu'), '/var/log/proxy/proxy.prof.supervisor.cpuprofile');
  assert.equal(profilePath('/p', { worker: 3 }, 'cpu'), '/p.worker-3.cpuprofile');
  assert.equal(profilePath('/p', { worker: 3 }, 'heap'), '/p.worker-3.heapprofile');
});

test('a profile of this process is written as .cpuprofile JSON', { timeout: 20_000 }, async () => {
  const profiler = new ProcessProfiler('cpu');
  const file = path.join(dir, 'a.cpuprofile');
  await profiler.start(file);
  await assert.rejects(profiler.start(path.join(dir, 'b.cpuprofile')), ProfilerStateError);
  const until = Date.now() + 50;
  while (Date.now() < until) JSON.stringify({ busy: Math.random() });
  assert.equal(await profiler.stop(), file);
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as { nodes: unknown[]; samples: number[]; startTime: number; endTime: number };
  assert.ok(profile.nodes.length > 0);
  assert.ok(profile.samples.length > 0);
  assert.ok(profile.endTime > profile.startTime);
  assert.equal(await profiler.stop(), null);
  assert.equal(fs.existsSync(path.join(dir, 'b.cpuprofile')), false);
});

test('a path that cannot be written fails the start, and leaves the profiler stopped', { timeout: 20_000 }, async () => {
  const profiler = new ProcessProfiler('cpu');
  await assert.rejects(profiler.start(path.join(dir, 'missing', 'x.cpuprofile')), { code: 'ENOENT' });
  assert.equal(profiler.active, false);
  await profiler.start(path.join(dir, 'c.cpuprofile'));
  assert.ok((await profiler.stop())?.endsWith('c.cpuprofile'));
});

test('a heap profile of this process is written as .heapprofile JSON, beside a CPU profile', { timeout: 20_000 }, async () => {
  const heap = new ProcessProfiler('heap');
  const cpu = new ProcessProfiler('cpu');
  const file = path.join(dir, 'a.heapprofile');
  await heap.start(file);
  await cpu.start(path.join(dir, 'd.cpuprofile'));
  await assert.rejects(heap.start(path.join(dir, 'b.heapprofile')), { message: 'the heap profiler is already running' });
  const kept: string[][] = [];
  for (let i = 0; i < 2000; i++) kept.push(Array.from({ length: 100 }, (_, j) => `${i}:${j}`));
  assert.equal(await heap.stop(), file);
  assert.ok((await cpu.stop())?.endsWith('d.cpuprofile'));
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as { head: { children: unknown[] }; samples: unknown[] };
  assert.ok(profile.head.children.length > 0);
  assert.ok(profile.samples.length > 0, `${kept.length} arrays kept, no allocation sampled`);
  assert.equal(await heap.stop(), null);
});
