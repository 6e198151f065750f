// A cluster's health_checks beyond the protos' own rules: one check at most (Envoy's message),
// its checker's own rules (its descriptor's: src/extensions/health_checkers).

import type { ValidationContext } from '../extension';
import { FieldError } from '../errors';
import { childPath, indexPath } from '../field_path';
import { JsonObject, messageField, messageList } from '../json';

export function validateHealthChecks(cluster: JsonObject, clusterPath: string, context: ValidationContext): void {
  const checks = messageList(cluster, 'health_checks');
  const listPath = childPath(clusterPath, 'health_checks');
  if (checks.length > 1) throw new FieldError(listPath, 'Multiple health checks not supported');
  checks.forEach((check, i) => {
    const path = indexPath(listPath, i);
    for (const checker of context.extensions.of('proxy.health_checkers')) {
      const config = messageField(check, checker.name);
      if (config !== undefined) checker.validate?.(config, childPath(path, checker.name), context);
    }
  });
}
