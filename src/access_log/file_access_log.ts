// proxy.access_loggers.file (Envoy's FileAccessLog): each stream it is told of becomes one
// formatted entry in its file, through the process's buffered writer.

import type { RequestHead, ResponseHead } from '../http/message';
import type { StreamInfo } from '../stream_info/stream_info';
import type { AccessLog } from './access_log';
import type { BufferedFileWriter } from './file_writer';
import type { LogFormatter } from './log_formatter';

export class FileAccessLog implements AccessLog {
  constructor(
    private readonly formatter: LogFormatter,
    private readonly file: BufferedFileWriter,
  ) {}

  log(request: RequestHead | null, response: ResponseHead | null, trailers: readonly string[] | null, info: StreamInfo): void {
    this.file.write(this.formatter.format({ request, response, trailers, info }));
  }
}
