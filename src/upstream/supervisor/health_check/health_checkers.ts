// The kinds of active health check (HealthCheck's http_health_check, tcp_health_check and
// grpc_health_check): each makes the probes its hosts are checked with. They are the factories
// of the health checker descriptors (src/extensions/health_checkers), which active health
// checking is handed.

import type { GrpcHealthCheck, HealthCheck, HealthChecker, HttpHealthCheck, TcpHealthCheck } from '../../../config/model';
import { stringMatcher } from '../../../common/string_matcher';
import type { RandomSource } from '../../../common/random';
import type { HealthSourceContext } from '../supervisor_cluster_manager';
import type { HealthCheckStats } from './health_check_stats';
import type { HealthCheckerType } from './health_event_log';
import type { ProbeFactory } from './health_probe';
import { GrpcProbe, grpcCheckRequest } from './grpc_probe';
import { httpCheckOutcome, httpCheckRequest, HttpProbe } from './http_probe';
import { TcpProbe } from './tcp_probe';

/** What a checker's probes may use. */
export interface CheckerEnvironment {
  readonly context: HealthSourceContext;
  readonly config: HealthCheck;
  readonly stats: HealthCheckStats;
  readonly random: RandomSource;
}

/**
 * One kind of check. Its methods take the model of its own kind (the registry hands each check
 * the checker of its kind).
 */
export interface HealthCheckerFactory<C extends HealthChecker = HealthChecker> {
  readonly kind: C['kind'];
  /** As the event log names it. */
  readonly type: HealthCheckerType;
  probes(checker: C, environment: CheckerEnvironment): ProbeFactory;
}

/** Envoy's default for the runtime key health_check.verify_cluster: always. */
const VERIFY_CLUSTER_PERCENT = { numerator: 100, denominator: 'HUNDRED' } as const;

export const HTTP_CHECKER: HealthCheckerFactory<HttpHealthCheck> = {
  kind: 'http',
  type: 'HTTP',
  probes(checker, { context, config, stats, random }) {
    const cluster = context.config;
    const request = httpCheckRequest(checker, cluster.name, cluster.httpProtocolOptions.headerKeyFormat);
    const matches = checker.serviceNameMatcher === null ? null : stringMatcher(checker.serviceNameMatcher);
    const verifyCluster = (): ((name: string) => boolean) | null => {
      if (matches === null || !context.runtime.snapshot().featureEnabled('health_check.verify_cluster', VERIFY_CLUSTER_PERCENT, random())) {
        return null;
      }
      stats.verifyCluster.inc();
      return matches;
    };
    const maxHeadersCount = cluster.commonHttpProtocolOptions.maxHeadersCount;
    return (target) => new HttpProbe(target, request, config.reuseConnection, (head) => httpCheckOutcome(head, checker, verifyCluster()), maxHeadersCount);
  },
};

export const TCP_CHECKER: HealthCheckerFactory<TcpHealthCheck> = {
  kind: 'tcp',
  type: 'TCP',
  probes(checker, { config }) {
    const send = Buffer.from(checker.send, 'hex');
    const receive = checker.receive.map((hex) => Buffer.from(hex, 'hex'));
    return (target) => new TcpProbe(target, send, receive, config.reuseConnection);
  },
};

export const GRPC_CHECKER: HealthCheckerFactory<GrpcHealthCheck> = {
  kind: 'grpc',
  type: 'GRPC',
  probes(checker, { context, config }) {
    const request = grpcCheckRequest(checker.serviceName);
    return (target) => new GrpcProbe(target, checker.authority || context.config.name, request, config.reuseConnection);
  },
};
