// The access_log list of the HTTP connection manager and tcp_proxy (config.accesslog.v3.AccessLog):
// each entry's logger is an extension, found in the registry and checked by its descriptor; its
// filter, which any logger may have, is checked and modelled here.

import { accessLogFilterModel } from '../../access_log/access_log_model';
import type { AccessLogEntryConfig } from '../../access_log/access_log_config';
import type { ConfigExtensions, ValidationContext } from '../../config/extension';
import { atField } from '../../config/errors';
import { childPath, indexPath } from '../../config/field_path';
import { type JsonObject, messageField, messageList } from '../../config/json';
import { anyContent, leaf, list } from '../../config/shape';
import { validateExtension } from '../../config/validation/extensions';

/** The list's fields; each typed_config is checked by its @type (its logger's descriptor), the filter by validation. */
export const ACCESS_LOG_LIST = list({ fields: { name: leaf, filter: leaf, typed_config: anyContent } });

/** @param config the filter's typed_config, at `path` */
export function validateAccessLogs(config: JsonObject, path: string, context: ValidationContext): void {
  messageList(config, 'access_log').forEach((entry, i) => {
    const entryPath = indexPath(childPath(path, 'access_log'), i);
    validateExtension('proxy.access_loggers', entry, entryPath, context);
    const filter = messageField(entry, 'filter');
    if (filter !== undefined) atField(childPath(entryPath, 'filter'), () => accessLogFilterModel(filter));
  });
}

/** The validated list's model. */
export function accessLogsModel(config: JsonObject, extensions: ConfigExtensions): readonly AccessLogEntryConfig[] {
  return messageList(config, 'access_log').map((entry) => {
    const filter = messageField(entry, 'filter');
    return { filter: filter === undefined ? null : accessLogFilterModel(filter), logger: extensions.model('proxy.access_loggers', entry) };
  });
}
