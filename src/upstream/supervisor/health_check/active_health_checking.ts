// The health source factory of active health checking: a checker for a cluster with
// health_checks, with the probe its checker kind calls for.

import type { HealthCheck } from '../../../config/model';
import type { Connector } from '../../../network/connector';
import { ClusterTransportSockets } from '../../shared/cluster_transport_sockets';
import type { Logger } from '../../../log/logger_api';
import type { DiscoveredHost } from '../../shared/membership';
import type { HealthSourceContext, HealthSourceFactory } from '../supervisor_cluster_manager';
import { ActiveHealthChecker } from './active_health_checker';
import { HealthEventLog } from './health_event_log';
import { healthCheckStats } from './health_check_stats';
import type { HealthCheckerFactory } from './health_checkers';
import { type RandomSource, mathRandom } from '../../../common/random';

export class ActiveHealthChecking implements HealthSourceFactory {
  /**
   * @param checkers the kinds of check this build runs (the registry's health checkers); a
   *   check of another kind is refused by validation before it gets here
   */
  constructor(
    private readonly checkers: readonly HealthCheckerFactory[],
    private readonly random: RandomSource = mathRandom,
    private readonly wallClock: () => number = Date.now,
  ) {}

  create(context: HealthSourceContext): ActiveHealthChecker | null {
    const config = context.config.healthChecks[0];
    if (config === undefined) return null;
    const checker = this.checkers.find((c) => c.kind === config.checker.kind);
    if (checker === undefined) throw new Error(`cluster '${context.config.name}': no ${config.checker.kind} health checker is registered`);
    const stats = healthCheckStats(context.stats);
    const eventLog = config.eventLogPath === '' ? null : openEventLog(config.eventLogPath, context.log.forFile(__filename));
    return new ActiveHealthChecker(context, config, {
      type: checker.type,
      stats,
      probes: checker.probes(config.checker, { context, config, stats, random: this.random }),
      connectorFor: this.connectors(context, config),
      random: this.random,
      eventLog,
      wallClock: this.wallClock,
    });
  }

  /**
   * Health checks go through the cluster's transport sockets, TLS included, as in Envoy; their
   * TLS contexts are the supervisor's own copies, reloaded with its other certificates.
   */
  private connectors(context: HealthSourceContext, config: HealthCheck): (host: DiscoveredHost) => Connector {
    const sockets = new ClusterTransportSockets(context.config, context.stats, context.log, context.secrets);
    context.watchCertificates(sockets.tlsContexts());
    const criteria = config.transportSocketMatchCriteria;
    if (criteria === null) return (host) => sockets.connectorFor(host);
    const connector = sockets.connectorForCriteria(criteria);
    return () => connector;
  }
}

function openEventLog(path: string, log: Logger): HealthEventLog {
  return new HealthEventLog(path, (error) => log.error(`health check event log ${path}: ${error.message}`));
}
