// The `date` header value (RFC 7231 IMF-fixdate), formatted at most once per second, as
// Envoy's cached date provider does: every response carries one.

export class DateCache {
  private second = -1;
  private value = '';

  current(): string {
    const now = Date.now();
    const second = Math.floor(now / 1000);
    if (second !== this.second) {
      this.second = second;
      this.value = new Date(second * 1000).toUTCString();
    }
    return this.value;
  }
}
