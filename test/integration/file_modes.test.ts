// The files the proxy creates are 0644 whatever the umask, as Envoy's are: under umask 000 none
// of them may come out writable by others.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { posixSharedMemory, sharedRegionName } from '../../src/shared_memory/posix_shared_memory';
import { StatsRegion } from '../../src/shared_memory/region';
import { uniqueBaseId } from '../helpers/hot_restart_run';
import { startUpstream } from '../helpers/http_peers';
import { makeTempDir, request, spawnProxy, waitFor } from '../helpers/proxy_process';
import { routedBootstrap } from '../helpers/routed_bootstrap';

/** Spawns with umask `mask` (a child inherits its parent's), restoring this process's after. */
function withUmask<T>(mask: number, spawn: () => T): T {
  const previous = process.umask(mask);
  try {
    return spawn();
  } finally {
    process.umask(previous);
  }
}

test('under umask 000 every file the proxy creates is 0644', { timeout: 60_000 }, async (t) => {
  const upstream = await startUpstream('backend');
  const dir = makeTempDir();
  const baseId = uniqueBaseId();
  const files = {
    log: path.join(dir, 'proxy.log'),
    adminAccessLog: path.join(dir, 'admin_access.log'),
    baseId: path.join(dir, 'base_id'),
    adminAddress: path.join(dir, 'admin_address'),
    profile: path.join(dir, 'proxy.prof'),
  };
  const config = path.join(dir, 'bootstrap.json');
  fs.writeFileSync(
    config,
    JSON.stringify(
      routedBootstrap(upstream.port, {
        access_log_path: files.adminAccessLog,
        profile_path: files.profile,
        address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
      }),
    ),
  );
  const proc = withUmask(0, () =>
    spawnProxy(
      ['-c', config, '--base-id', String(baseId), '--base-id-path', files.baseId, '--admin-address-path', files.adminAddress,
        '--log-path', files.log, '--concurrency', '1'],
      { dir },
    ),
  );
  t.after(async () => {
    await proc.cleanup();
    await upstream.close();
    StatsRegion.unlinkStale(posixSharedMemory, sharedRegionName(baseId));
  });
  const admin = await waitFor('the proxy to serve', async () => {
    if (proc.child.exitCode !== null) throw new Error(`proxy exited ${proc.child.exitCode}: ${proc.stderr}`);
    const address = fs.existsSync(files.adminAddress) ? fs.readFileSync(files.adminAddress, 'utf8') : '';
    if (address === '') return undefined;
    return (await request(`http://${address}/ready`)).status === 200 ? `http://${address}` : undefined;
  });
  assert.equal((await request(`${admin}/cpuprofiler?enable=y`, { method: 'POST' })).status, 200);
  const stopped = await request(`${admin}/cpuprofiler?enable=n`, { method: 'POST' });
  assert.equal(stopped.status, 200, stopped.body);
  const profiles = [`${files.profile}.supervisor.cpuprofile`, `${files.profile}.worker-0.cpuprofile`];
  const modes = Object.fromEntries(
    [...Object.entries(files).filter(([name]) => name !== 'profile'), ...profiles.map((file) => [path.basename(file), file])].map(([name, file]) => [
      name,
      (fs.statSync(file!).mode & 0o777).toString(8),
    ]),
  );
  assert.deepEqual(modes, {
    log: '644',
    adminAccessLog: '644',
    baseId: '644',
    adminAddress: '644',
    'proxy.prof.supervisor.cpuprofile': '644',
    'proxy.prof.worker-0.cpuprofile': '644',
  });
});
