// HealthCheck.grpc_health_check: grpc.health.v1.Health/Check over HTTP/2
// (src/upstream/supervisor/health_check/grpc_probe.ts).

import type { ExtensionDescriptor } from '../../config/extension';
import { stringField } from '../../config/json';
import { leaf } from '../../config/shape';
import { GRPC_CHECKER, type HealthCheckerFactory } from '../../upstream/supervisor/health_check/health_checkers';

export const GRPC_HEALTH_CHECKER: ExtensionDescriptor<'proxy.health_checkers', HealthCheckerFactory> = {
  category: 'proxy.health_checkers',
  name: 'grpc_health_check',
  configType: null,
  shape: { fields: { service_name: leaf, authority: leaf } },
  model: (grpc) => ({ kind: 'grpc', serviceName: stringField(grpc, 'service_name'), authority: stringField(grpc, 'authority') }),
  factory: GRPC_CHECKER,
};
