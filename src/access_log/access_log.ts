// One configured access log (Envoy's AccessLog::Instance): told of each stream as it ends, it
// decides through its filter whether to write a line, and formats and writes it.

import type { RequestHead, ResponseHead } from '../http/message';
import type { StreamInfo } from '../stream_info/stream_info';

export interface AccessLog {
  /**
   * @param request the request head as received; null when none was parsed (TCP, a protocol error)
   * @param response the response head as sent downstream; null when none was sent
   * @param trailers the response trailers as sent, [name, value, ...]; null when none were
   */
  log(request: RequestHead | null, response: ResponseHead | null, trailers: readonly string[] | null, info: StreamInfo): void;
}
