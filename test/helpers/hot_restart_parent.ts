// The parent epoch of test/integration/hot_restart_sockets.test.ts, in its own process: binds
// its domain sockets and one listen socket, answers its child through a ParentEndpoint and
// reports every handler call and log line as a JSON line on stdout. It exits when told to
// terminate, or when its stdin closes so that a crashed test run never leaves it behind.
// Usage: hot_restart_parent <socket-path> <socket-mode (octal)> <base-id> <epoch> [idle poll ms]

import * as addon from '../../src/native/addon';
import { HotRestartSockets } from '../../src/hot_restart/domain_sockets';
import { tcpListenAddress } from '../../src/hot_restart/messages';
import { ParentEndpoint } from '../../src/hot_restart/parent_endpoint';
import type { Logger } from '../../src/log/logger_api';
import type { Severity } from '../../src/log/level';

/** What the parent reports to epoch 0 of the test's start time. */
export const ORIGINAL_START_TIME_UNIX_SECONDS = 1_600_000_123;

export type ParentReport =
  | { readonly step: 'ready'; readonly listenAddress: string; readonly port: number; readonly pid: number }
  | { readonly step: 'shutdown_admin' }
  | { readonly step: 'pass_listen_socket'; readonly address: string; readonly passed: boolean }
  | { readonly step: 'drain_listeners' }
  | { readonly step: 'terminate' }
  | { readonly step: 'log'; readonly level: Severity; readonly message: string };

function report(message: ParentReport): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

function reportingLogger(): Logger {
  const line = (level: Severity) => (message: string) => report({ step: 'log', level, message });
  const logger: Logger = {
    enabled: () => true,
    trace: line('trace'),
    debug: line('debug'),
    info: line('info'),
    warn: line('warning'),
    error: line('error'),
    critical: line('critical'),
    forFile: () => logger,
  };
  return logger;
}

function main(): void {
  const [socketPath, socketMode, baseId, epoch, pollMs] = process.argv.slice(2);
  const sockets = HotRestartSockets.bind({
    socketPath,
    socketMode: parseInt(socketMode, 8),
    baseId: Number(baseId),
    restartEpoch: Number(epoch),
  });
  // Listening but never accepting: a connection that gets answered was accepted by the child.
  const listener = addon.listenTcp('127.0.0.1', 0, 16);
  const listenAddress = tcpListenAddress('127.0.0.1', listener.port);

  const endpoint = new ParentEndpoint(
    sockets.parent,
    {
      shutdownAdmin: async () => {
        report({ step: 'shutdown_admin' });
        return { originalStartTimeUnixSeconds: ORIGINAL_START_TIME_UNIX_SECONDS };
      },
      passListenSocket: (address) => {
        const passed = address === listenAddress;
        report({ step: 'pass_listen_socket', address, passed });
        return passed ? listener.fd : null;
      },
      drainListeners: () => report({ step: 'drain_listeners' }),
      terminate: () => {
        report({ step: 'terminate' });
        endpoint.stop();
        sockets.close();
        addon.closeFd(listener.fd);
        process.exit(0);
      },
    },
    reportingLogger(),
    ...(pollMs === undefined ? [] : [Number(pollMs)]),
  );
  endpoint.start();
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
  report({ step: 'ready', listenAddress, port: listener.port, pid: process.pid });
}

// The test imports this file's constants and types; only a spawned parent runs.
if (require.main === module) main();
