// The health source factory of active health checking: a checker for a cluster with
// health_checks, with the probe its checker kind calls for.

import type { ClusterConfig, HealthCheck } from '../../config/model';
import { stringMatcher } from '../../common/string_matcher';
import type { Connector } from '../../network/connector';
import { ClusterTransportSockets } from '../cluster_transport_sockets';
import type { Logger } from '../../log/logger_api';
import type { DiscoveredHost } from '../membership';
import type { HealthSourceContext, HealthSourceFactory } from '../supervisor_cluster_manager';
import { ActiveHealthChecker } from './active_health_checker';
import { HealthEventLog, type HealthCheckerType } from './health_event_log';
import { type HealthCheckStats, healthCheckStats } from './health_check_stats';
import type { ProbeFactory } from './health_probe';
import { GrpcProbe, grpcCheckRequest } from './grpc_probe';
import { httpCheckOutcome, httpCheckRequest, HttpProbe } from './http_probe';
import { TcpProbe } from './tcp_probe';
import { type RandomSource, mathRandom } from '../../common/random';

/** Envoy's default for the runtime key health_check.verify_cluster: always. */
const VERIFY_CLUSTER_PERCENT = { numerator: 100, denominator: 'HUNDRED' } as const;

export class ActiveHealthChecking implements HealthSourceFactory {
  constructor(
    private readonly random: RandomSource = mathRandom,
    private readonly wallClock: () => number = Date.now,
  ) {}

  create(context: HealthSourceContext): ActiveHealthChecker | null {
    const config = context.config.healthChecks[0];
    if (config === undefined) return null;
    const stats = healthCheckStats(context.stats);
    const eventLog = config.eventLogPath === '' ? null : openEventLog(config.eventLogPath, context.log.forFile(__filename));
    return new ActiveHealthChecker(context, config, {
      type: checkerType(config),
      stats,
      probes: this.probes(context, config, stats),
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
    const sockets = new ClusterTransportSockets(context.config, context.stats, context.log);
    context.watchCertificates(sockets.tlsContexts());
    const criteria = config.transportSocketMatchCriteria;
    if (criteria === null) return (host) => sockets.connectorFor(host);
    const connector = sockets.connectorForCriteria(criteria);
    return () => connector;
  }

  private probes(context: HealthSourceContext, config: HealthCheck, stats: HealthCheckStats): ProbeFactory {
    const cluster: ClusterConfig = context.config;
    const checker = config.checker;
    switch (checker.kind) {
      case 'http': {
        const request = httpCheckRequest(checker, cluster.name, cluster.httpProtocolOptions.headerKeyFormat);
        const matches = checker.serviceNameMatcher === null ? null : stringMatcher(checker.serviceNameMatcher);
        const verifyCluster = (): ((name: string) => boolean) | null => {
          if (matches === null || !context.runtime.snapshot().featureEnabled('health_check.verify_cluster', VERIFY_CLUSTER_PERCENT, this.random())) {
            return null;
          }
          stats.verifyCluster.inc();
          return matches;
        };
        const maxHeadersCount = cluster.commonHttpProtocolOptions.maxHeadersCount;
        return (target) => new HttpProbe(target, request, config.reuseConnection, (head) => httpCheckOutcome(head, checker, verifyCluster()), maxHeadersCount);
      }
      case 'tcp': {
        const send = Buffer.from(checker.send, 'hex');
        const receive = checker.receive.map((hex) => Buffer.from(hex, 'hex'));
        return (target) => new TcpProbe(target, send, receive, config.reuseConnection);
      }
      case 'grpc': {
        const request = grpcCheckRequest(checker.serviceName);
        return (target) => new GrpcProbe(target, checker.authority || cluster.name, request, config.reuseConnection);
      }
    }
  }
}

function openEventLog(path: string, log: Logger): HealthEventLog {
  return new HealthEventLog(path, (error) => log.error(`health check event log ${path}: ${error.message}`));
}

function checkerType(config: HealthCheck): HealthCheckerType {
  return config.checker.kind === 'http' ? 'HTTP' : config.checker.kind === 'tcp' ? 'TCP' : 'GRPC';
}
