// Validation of a whole decoded v3 bootstrap: the rules the protos cannot express. Pure; stops at
// the first problem, like Envoy, and names its field path.

import { JsonObject, messageField, messageList, stringField } from '../json';
import { validateAdmin } from './admin';
import { validateClusters } from './clusters';
import { validateListeners } from './listeners';

/** @throws FieldError */
export function validateBootstrap(bootstrap: JsonObject): void {
  validateAdmin(bootstrap);
  validateClusters(bootstrap);
  const resources = messageField(bootstrap, 'static_resources') ?? {};
  const clusterNames = new Set(messageList(resources, 'clusters').map((cluster) => stringField(cluster, 'name')));
  validateListeners(bootstrap, clusterNames);
}
