// proxy.access_loggers.file (Envoy's FileAccessLog): each stream that passes the log's filter
// becomes one formatted entry in the log's file, through the process's buffered writer.

import type { RequestHead, ResponseHead } from '../http/message';
import type { StreamInfo } from '../stream_info/stream_info';
import type { AccessLog } from './access_log';
import type { AccessLogFilter } from './access_log_filter';
import type { BufferedFileWriter } from './file_writer';
import type { LogFormatter } from './log_formatter';

export class FileAccessLog implements AccessLog {
  constructor(
    private readonly filter: AccessLogFilter | null,
    private readonly formatter: LogFormatter,
    private readonly file: BufferedFileWriter,
  ) {}

  log(request: RequestHead | null, response: ResponseHead | null, trailers: readonly string[] | null, info: StreamInfo): void {
    const context = { request, response, trailers, info };
    if (this.filter !== null && !this.filter.evaluate(context)) return;
    this.file.write(this.formatter.format(context));
  }
}
