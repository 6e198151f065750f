// Bootstrap.overload_manager's model, from the validated v3 JSON.

import type { ConfigExtensions } from './extension';
import { durationMs, type JsonObject, messageField, messageList, numberField, stringField } from './json';
import type { OverloadManagerConfig } from './model';
import { overloadActionKind, overloadActionName, triggerMonitorName } from './overload_names';

/** Envoy's refresh_interval when unset. */
const DEFAULT_REFRESH_INTERVAL_MS = 1000;

export function overloadManagerModel(config: JsonObject, extensions: ConfigExtensions): OverloadManagerConfig {
  const monitors = messageList(config, 'resource_monitors');
  const monitorIndex = new Map(monitors.map((monitor, i) => [stringField(monitor, 'name'), i]));
  return {
    refreshIntervalMs: Math.trunc(durationMs(config, 'refresh_interval') ?? DEFAULT_REFRESH_INTERVAL_MS),
    resourceMonitors: monitors.map((monitor) => extensions.model('proxy.resource_monitors', monitor)),
    actions: messageList(config, 'actions').map((action) => {
      // Validation admitted only the kinds this build acts on, with triggers naming its monitors.
      const kind = overloadActionKind(stringField(action, 'name'))!;
      return {
        name: overloadActionName(kind),
        kind,
        triggers: messageList(action, 'triggers').map((trigger) => ({
          monitor: monitorIndex.get(triggerMonitorName(stringField(trigger, 'name')))!,
          threshold: numberField(messageField(trigger, 'threshold') ?? {}, 'value'),
        })),
      };
    }),
  };
}
