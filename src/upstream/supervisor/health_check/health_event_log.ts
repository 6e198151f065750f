// event_log_path: one HealthCheckEvent per line, as Envoy writes them (the message as proto
// JSON: camelCase names, enums by name, every primitive field printed). Lines go to the file
// through the access log's writer; a failure to open or write it is logged, never fatal.

import type { SocketAddress } from '../../../config/model';
import { BufferedFileWriter } from '../../../access_log/file_writer';
import type { HealthEvent } from './verdict';

export type HealthCheckerType = 'HTTP' | 'TCP' | 'GRPC';

/** protobuf's Timestamp in JSON: RFC 3339 in UTC, fraction digits only when there is a fraction. */
function timestampJson(epochMs: number): string {
  return new Date(epochMs).toISOString().replace('.000Z', 'Z');
}

function eventJson(event: HealthEvent): [string, unknown] {
  switch (event.kind) {
    case 'eject_unhealthy':
      return ['ejectUnhealthyEvent', { failureType: event.failureType }];
    case 'health_check_failure':
      return ['healthCheckFailureEvent', { failureType: event.failureType, firstCheck: event.firstCheck }];
    case 'add_healthy':
      return ['addHealthyEvent', { firstCheck: event.firstCheck }];
    case 'degraded_healthy_host':
      return ['degradedHealthyHost', {}];
    case 'no_longer_degraded_host':
      return ['noLongerDegradedHost', {}];
  }
}

/** One line of the event log, with its newline. */
export function healthEventLine(type: HealthCheckerType, host: SocketAddress, clusterName: string, event: HealthEvent, epochMs: number): string {
  const [key, body] = eventJson(event);
  const line = {
    healthCheckerType: type,
    host: { socketAddress: { protocol: 'TCP', address: host.address, portValue: host.port, resolverName: '', ipv4Compat: false } },
    clusterName,
    [key]: body,
    timestamp: timestampJson(epochMs),
  };
  return JSON.stringify(line) + '\n';
}

export class HealthEventLog {
  private readonly writer: Promise<BufferedFileWriter | null>;

  constructor(path: string, onError: (error: Error) => void) {
    // Events are rare: each line is written at once.
    this.writer = BufferedFileWriter.open(path, { encoding: 'utf8', flushIntervalMs: 0, onError }).catch((error: Error) => {
      onError(error);
      return null;
    });
  }

  write(line: string): void {
    void this.writer.then((w) => w?.write(line));
  }

  close(): void {
    void this.writer.then((w) => w?.close());
  }
}
