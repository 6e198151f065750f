// The access_log list of the HTTP connection manager and tcp_proxy: each entry's logger found
// and its typed_config and filter checked (src/access_log/access_log_model.ts).

import { accessLogEntryModel } from '../../access_log/access_log_model';
import { atField } from '../errors';
import { childPath, indexPath } from '../field_path';
import { JsonObject, messageList } from '../json';

/** @param config the filter's typed_config, at `path` */
export function validateAccessLogs(config: JsonObject, path: string): void {
  messageList(config, 'access_log').forEach((entry, i) => atField(indexPath(childPath(path, 'access_log'), i), () => accessLogEntryModel(entry)));
}
