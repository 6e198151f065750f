// What the statsd and DogStatsD sinks' descriptors share: the UDP address they send to (its
// shape and rules), the default prefix, and the sink their models create.

import { FieldError } from '../../config/errors';
import { childPath } from '../../config/field_path';
import { type JsonObject, messageField, numberField } from '../../config/json';
import type { StatsdSinkConfig, StatsSinkConfig } from '../../config/model';
import { leaf, type Shape } from '../../config/shape';
import { validateSocketAddress } from '../../config/validation/socket_address';
import type { StatsSink, StatsSinkContext } from '../../stats/sinks/stats_sink';

/** Envoy's default prefix, `envoy`, in our spelling. */
export const DEFAULT_STATSD_PREFIX = 'proxy';

/**
 * An IP socket address; its `protocol` is read by no one, as in Envoy, which sends datagrams
 * whatever it says (examples often set UDP). Pipes are refused: node:dgram has no Unix datagram
 * sockets.
 */
export const STATSD_ADDRESS: Shape = { fields: { socket_address: { fields: { address: leaf, port_value: leaf, protocol: leaf } } } };

/** @param address the `address` at `path` */
export function validateStatsdAddress(address: JsonObject, path: string): void {
  validateSocketAddress(address, path, 'ip', 'datagram');
  const socketPath = childPath(path, 'socket_address');
  if (numberField(messageField(address, 'socket_address') ?? {}, 'port_value') === 0) {
    throw new FieldError(childPath(socketPath, 'port_value'), 'a statsd address needs a port: datagrams cannot be sent to port 0');
  }
}

/** The sink of a statsd or DogStatsD descriptor's model. */
export function createStatsdSink(model: StatsSinkConfig, context: StatsSinkContext): StatsSink {
  // The registry hands this factory the models the two descriptors built.
  const config = model as StatsdSinkConfig;
  const log = context.log;
  const { StatsdNames } = require('../../stats/sinks/statsd_lines') as typeof import('../../stats/sinks/statsd_lines');
  const names = new StatsdNames(config.prefix, config.tagged ? context.tags : null);
  const { target } = config;
  if (target.kind === 'udp') {
    const { UdpStatsdSink } = require('../../stats/sinks/udp_statsd_sink') as typeof import('../../stats/sinks/udp_statsd_sink');
    return new UdpStatsdSink(target.address, names, config.maxBytesPerDatagram, log);
  }
  const { TcpStatsdSink } = require('../../stats/sinks/tcp_statsd_sink') as typeof import('../../stats/sinks/tcp_statsd_sink');
  const { ClusterHosts } = require('../../config/xds/cluster_hosts') as typeof import('../../config/xds/cluster_hosts');
  return new TcpStatsdSink(new ClusterHosts(target.clusterName, context.clusterAddresses), names, context.stats.counter('statsd.cx_overflow'), log);
}
