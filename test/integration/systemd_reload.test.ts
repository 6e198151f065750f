// `systemctl reload proxy` as scripts/proxy.service runs it: the unit's ExecStart (the wrapper
// over scripts/start-proxy.sh, configured by scripts/proxy.env's settings as EnvironmentFile=
// gives them) and its ExecReload (scripts/reload-proxy with $MAINPID), while the test first
// breaks the configuration file, then mends it.

import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { servingBootstrap } from '../helpers/config_fixtures';
import { HOT_RESTARTER, HotRestarterRun, uniqueBaseId } from '../helpers/hot_restart_run';
import { startUpstream, type Upstream } from '../helpers/http_peers';
import { listenerPort, makeTempDir, request, waitFor } from '../helpers/proxy_process';
import { ENV_FILE, readEnvironmentFile, unitSetting } from '../helpers/systemd_unit';

interface Reload {
  readonly code: number;
  readonly output: string;
}

describe('systemctl reload: validate, then hot restart', { timeout: 120_000 }, () => {
  let upstream: Upstream | undefined;
  let run: HotRestarterRun | undefined;
  let dir = '';
  let configPath = '';
  let settings: NodeJS.ProcessEnv = {};
  let port = 0;

  function writeConfig(config: unknown): void {
    fs.writeFileSync(configPath, JSON.stringify(config));
  }

  /** The admin URL once `epoch` (the last field of /server_info's line) answers /ready with 200. */
  function serving(epoch: number): Promise<string> {
    return waitFor(`epoch ${epoch} to serve`, async () => {
      const file = path.join(dir, 'admin');
      if (!fs.existsSync(file)) return undefined;
      const admin = `http://${fs.readFileSync(file, 'utf8')}`;
      const line = (await request(`${admin}/server_info`)).body.trim().split(' ');
      if (line.at(-1) !== String(epoch)) return undefined;
      return (await request(`${admin}/ready`)).status === 200 ? admin : undefined;
    }, 30_000);
  }

  /** The unit's ExecReload, $MAINPID being the wrapper's pid, with the unit's environment. */
  function reload(): Promise<Reload> {
    const [command, ...args] = unitSetting('ExecReload', { MAINPID: String(run!.child.pid) });
    return new Promise((resolve) => {
      execFile(command!, args, { env: { ...process.env, ...settings }, timeout: 30_000 }, (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : Number(error.code), output: stdout + stderr }),
      );
    });
  }

  before(async () => {
    upstream = await startUpstream('web');
    dir = makeTempDir();
    configPath = path.join(dir, 'proxy.json');
    writeConfig(servingBootstrap({ upstreamPort: upstream.port, listenPort: 0, version: 'v1' }));
    const baseId = uniqueBaseId();
    settings = {
      ...readEnvironmentFile(ENV_FILE),
      PROXY_CONFIG: configPath,
      PROXY_BASE_ID: String(baseId),
      // The shipped file's socket lives in the unit's RuntimeDirectory; here in the temp dir.
      PROXY_SOCKET_PATH: path.join(dir, 'hot_restart'),
      PROXY_CONCURRENCY: '1',
      PROXY_DRAIN_TIME_S: '1',
      PROXY_PARENT_SHUTDOWN_TIME_S: '2',
      PROXY_OPTIONS: `--admin-address-path ${path.join(dir, 'admin')}`,
    };
    const [wrapper, startScript, ...more] = unitSetting('ExecStart');
    assert.equal(wrapper, HOT_RESTARTER);
    assert.deepEqual(more, []);
    run = HotRestarterRun.start(dir, startScript!, baseId, settings);
    port = await listenerPort(await serving(0), 'http_in');
  });

  after(async () => {
    await run?.cleanup();
    await upstream?.close();
  });

  test('a broken configuration is refused with its errors; the running epoch keeps serving', async () => {
    writeConfig({ ...servingBootstrap({ upstreamPort: upstream!.port, listenPort: port, version: 'v2' }), static_resources: { clusters: [{}] } });
    const refused = await reload();
    assert.notEqual(refused.code, 0, refused.output);
    assert.match(refused.output, new RegExp(`error initializing configuration '${configPath}': `));
    assert.match(refused.output, /reload-proxy: configuration rejected, not reloading; the running epoch keeps serving/);

    // The wrapper handles a SIGHUP sent before this SIGUSR1 first; only epoch 0 relays it.
    run!.signal('SIGUSR1');
    await waitFor('the wrapper to relay SIGUSR1', () => (run!.output.includes('sending SIGUSR1 to PID=') ? true : undefined));
    assert.doesNotMatch(run!.output, /got SIGHUP|at epoch 1/);
    assert.equal(run!.output.match(/sending SIGUSR1 to PID=/g)?.length, 1);

    const admin = await serving(0);
    assert.equal((await request(`${admin}/ready`)).status, 200);
    const proxied = await request(`http://127.0.0.1:${port}/through`);
    assert.equal(proxied.status, 200);
    assert.equal(JSON.parse(proxied.body).upstream, 'web');
    assert.equal((await request(`http://127.0.0.1:${port}/version`)).body, 'v1');
  });

  test('a valid configuration starts the next epoch, which serves it on the same port', async () => {
    writeConfig(servingBootstrap({ upstreamPort: upstream!.port, listenPort: port, version: 'v2' }));
    const reloaded = await reload();
    assert.equal(reloaded.code, 0, reloaded.output);
    assert.match(reloaded.output, new RegExp(`configuration '${configPath}' OK`));

    const admin = await serving(1);
    assert.equal(await listenerPort(admin, 'http_in'), port);
    // Until epoch 0's workers hear that they drain, they may still take a connection.
    await waitFor('the new configuration to answer', async () => ((await request(`http://127.0.0.1:${port}/version`)).body === 'v2' ? true : undefined));
    const proxied = await request(`http://127.0.0.1:${port}/through`);
    assert.equal(proxied.status, 200);
    assert.equal(JSON.parse(proxied.body).upstream, 'web');
  });
});
