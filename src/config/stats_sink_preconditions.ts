// What Envoy 1.16 requires of the node before its TCP statsd sink connects through a cluster:
// an identity (checkLocalInfo), known once --service-node and --service-cluster have overridden
// the bootstrap's node. Checked when the configuration is loaded, in --mode validate too, as
// Envoy's validation server creates its sinks.

import { FieldErrorCollector } from './errors';
import { indexPath } from './field_path';
import type { Bootstrap, NodeInfo } from './model';
import { requireNodeIdentity } from './node_overrides';

/**
 * @param node the node after --service-node and --service-cluster
 * @throws FieldError, or FieldErrors when several sinks fail
 */
export function checkStatsSinkPreconditions(bootstrap: Bootstrap, node: NodeInfo): void {
  const errors = new FieldErrorCollector();
  bootstrap.statsSinks.forEach((sink, i) => {
    if (sink.kind === 'statsd' && sink.target.kind === 'tcp') errors.run(() => requireNodeIdentity(node, 'tcp statsd', indexPath('stats_sinks', i)));
  });
  errors.throwIfAny();
}
