// The bootstrap's stats_sinks: each one a sink this build registers, with a typed_config its
// descriptor accepts (src/extensions/stat_sinks), as Envoy 1.16 creates them at start-up. Each
// sink is checked on its own.

import type { ValidationContext } from '../extension';
import type { FieldErrorCollector } from '../errors';
import { indexPath } from '../field_path';
import { type JsonObject, messageList } from '../json';
import { validateExtension } from './extensions';

/** @param context the static clusters a sink may connect to, and the registry */
export function validateStatsSinks(bootstrap: JsonObject, context: ValidationContext, errors: FieldErrorCollector): void {
  messageList(bootstrap, 'stats_sinks').forEach((sink, i) => {
    errors.run(() => validateExtension('proxy.stats_sinks', sink, indexPath('stats_sinks', i), context));
  });
}
