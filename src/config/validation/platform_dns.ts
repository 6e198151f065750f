// The spec's start-up failure: a cluster that sets its own DNS resolvers, or TCP for DNS, while
// the start-up runtime turns on the platform DNS API, which takes resolvers from system
// settings only and speaks UDP only.

import { FieldError, FieldErrorCollector } from '../errors';
import { childPath, indexPath } from '../field_path';
import { boolField, JsonObject, messageField, messageList } from '../json';
import type { Runtime } from '../../runtime/runtime';

export const PLATFORM_DNS_FEATURE = 'proxy.restart_features.use_platform_api_for_dns_lookups';

/** @throws FieldError, or FieldErrors for several clusters */
export function checkPlatformDns(bootstrap: JsonObject, runtime: Runtime): void {
  if (!runtime.getBoolean(PLATFORM_DNS_FEATURE, false)) return;
  const errors = new FieldErrorCollector();
  const resources = messageField(bootstrap, 'static_resources') ?? {};
  messageList(resources, 'clusters').forEach((cluster, i) =>
    errors.run(() => {
      const path = indexPath('static_resources.clusters', i);
      if (messageList(cluster, 'dns_resolvers').length > 0) {
        throw new FieldError(
          childPath(path, 'dns_resolvers'),
          `custom DNS resolvers cannot be used while runtime ${PLATFORM_DNS_FEATURE} is true (the platform API takes resolvers from system settings only); remove dns_resolvers or turn the feature off`,
        );
      }
      if (boolField(cluster, 'use_tcp_for_dns_lookups')) {
        throw new FieldError(
          childPath(path, 'use_tcp_for_dns_lookups'),
          `TCP for DNS lookups cannot be used while runtime ${PLATFORM_DNS_FEATURE} is true (the platform API uses UDP only); remove use_tcp_for_dns_lookups or turn the feature off`,
        );
      }
    }),
  );
  errors.throwIfAny();
}
