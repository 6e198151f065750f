// Lines gathered into datagrams as Envoy 1.16's UDP statsd writer gathers them: up to a size,
// joined by newlines (DogStatsD's max_bytes_per_datagram); a line as large as the size, or
// larger, goes alone, without holding back those gathered. With no size (0, the default), every
// line is a datagram of its own. Pure: `send` does the I/O.

export class DatagramBatcher {
  private lines: string[] = [];
  /** Bytes of the datagram being gathered, newlines included. */
  private bytes = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly send: (datagram: string) => void,
  ) {}

  add(line: string): void {
    const length = Buffer.byteLength(line);
    if (length >= this.maxBytes) {
      this.send(line);
      return;
    }
    if (this.bytes + length + 1 > this.maxBytes) this.flush();
    this.bytes += this.bytes === 0 ? length : length + 1;
    this.lines.push(line);
  }

  /** Sends what is gathered, if anything. */
  flush(): void {
    if (this.bytes === 0) return;
    this.send(this.lines.join('\n'));
    this.lines = [];
    this.bytes = 0;
  }
}
