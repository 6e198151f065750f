// Bootstrap.overload_manager: each monitor a registered one, named once; each action one this
// build acts on, named once, whose triggers name configured monitors, each once (Envoy's checks,
// in its words).

import type { ValidationContext } from '../extension';
import { FieldError, type FieldErrorCollector } from '../errors';
import { childPath, indexPath } from '../field_path';
import { type JsonObject, messageField, messageList, stringField } from '../json';
import { OVERLOAD_ACTION_KINDS, overloadActionKind, overloadActionName, triggerMonitorName } from '../overload_names';
import { validateExtension } from './extensions';

export function validateOverloadManager(bootstrap: JsonObject, context: ValidationContext, errors: FieldErrorCollector): void {
  const manager = messageField(bootstrap, 'overload_manager');
  if (manager === undefined) return;
  const monitors = new Set<string>();
  messageList(manager, 'resource_monitors').forEach((monitor, i) => {
    const path = indexPath('overload_manager.resource_monitors', i);
    errors.run(() => {
      validateExtension('proxy.resource_monitors', monitor, path, context);
      const name = stringField(monitor, 'name');
      if (monitors.has(name)) throw new FieldError(childPath(path, 'name'), `Duplicate resource monitor ${name}`);
      monitors.add(name);
    });
  });
  const actions = new Set<string>();
  messageList(manager, 'actions').forEach((action, i) => {
    errors.run(() => validateAction(action, indexPath('overload_manager.actions', i), monitors, actions));
  });
}

function validateAction(action: JsonObject, path: string, monitors: ReadonlySet<string>, actions: Set<string>): void {
  const name = stringField(action, 'name');
  const kind = overloadActionKind(name);
  if (kind === undefined) {
    const known = OVERLOAD_ACTION_KINDS.map(overloadActionName).join(', ');
    throw new FieldError(childPath(path, 'name'), `overload action '${name}' is not implemented by this build (it would be ignored); this build acts on ${known}`);
  }
  if (actions.has(kind)) throw new FieldError(childPath(path, 'name'), `Duplicate overload action ${name}`);
  actions.add(kind);
  const triggered = new Set<string>();
  messageList(action, 'triggers').forEach((trigger, j) => {
    const triggerPath = childPath(indexPath(childPath(path, 'triggers'), j), 'name');
    const monitor = triggerMonitorName(stringField(trigger, 'name'));
    if (!monitors.has(monitor)) throw new FieldError(triggerPath, `Unknown trigger resource ${stringField(trigger, 'name')} for overload action ${name}`);
    if (triggered.has(monitor)) throw new FieldError(triggerPath, `Duplicate trigger resource for overload action ${name}`);
    triggered.add(monitor);
  });
}
