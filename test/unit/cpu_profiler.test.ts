import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { cpuProfilePath, CpuProfiler, ProfilerStateError } from '../../src/server/cpu_profiler';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-cpuprofile-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

test('each process has its own file under profile_path', () => {
  assert.equal(cpuProfilePath('/var/log/proxy/proxy.prof', 'supervisor'), '/var/log/proxy/proxy.prof.supervisor.cpuprofile');
  assert.equal(cpuProfilePath('/p', { worker: 3 }), '/p.worker-3.cpuprofile');
});

test('a profile of this process is written as .cpuprofile JSON', { timeout: 20_000 }, async () => {
  const profiler = new CpuProfiler();
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
  const profiler = new CpuProfiler();
  await assert.rejects(profiler.start(path.join(dir, 'missing', 'x.cpuprofile')), { code: 'ENOENT' });
  assert.equal(profiler.active, false);
  await profiler.start(path.join(dir, 'c.cpuprofile'));
  assert.ok((await profiler.stop())?.endsWith('c.cpuprofile'));
});
