// The headers the HTTP filters set on one response, kept in the order they were set; reused from
// response to response on an HTTP/1 connection.

import type { ResponseHeaderSink } from '../../http/http_filter';

export class FilterHeaders implements ResponseHeaderSink {
  /** [name, value, ...]. */
  readonly pairs: string[] = [];

  reset(): void {
    this.pairs.length = 0;
  }

  set(name: string, value: string): void {
    this.pairs.push(name, value);
  }

  /** Whether a filter set `name`: the upstream's header of that name is replaced. */
  has(name: string): boolean {
    const pairs = this.pairs;
    for (let i = 0; i < pairs.length; i += 2) if (pairs[i] === name) return true;
    return false;
  }
}
