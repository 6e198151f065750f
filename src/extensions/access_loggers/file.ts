// proxy.access_loggers.file (src/access_log/file_access_log.ts): FileAccessLog's fields this
// build acts on, its format compiled when validated, its model and its logger, writing through
// the worker's buffered file of its path.

import type { FileAccessLogConfig } from '../../access_log/access_log_config';
import { FILE_ACCESS_LOG, FILE_ACCESS_LOG_SHAPE, FILE_ACCESS_LOG_TYPE, fileAccessLogModel, LEGACY_FILE_ACCESS_LOG, validateFileAccessLog } from '../../access_log/access_log_model';
import type { ExtensionDescriptor } from '../../config/extension';
import type { DataPlaneFactories } from '../data_plane_factories';

export const FILE_ACCESS_LOGGER: ExtensionDescriptor<'proxy.access_loggers', DataPlaneFactories['proxy.access_loggers']> = {
  category: 'proxy.access_loggers',
  name: FILE_ACCESS_LOG,
  aliases: [LEGACY_FILE_ACCESS_LOG],
  configType: FILE_ACCESS_LOG_TYPE,
  shape: FILE_ACCESS_LOG_SHAPE,
  validate: validateFileAccessLog,
  model: fileAccessLogModel,
  factory: (config, context) => {
    // The registry hands this factory the models this descriptor built.
    const file = config as FileAccessLogConfig;
    const { FileAccessLog } = require('../../access_log/file_access_log') as typeof import('../../access_log/file_access_log');
    const { createFormatter } = require('../../access_log/log_formatter') as typeof import('../../access_log/log_formatter');
    return new FileAccessLog(createFormatter(file.format), context.files.openSync(file.path));
  },
};
