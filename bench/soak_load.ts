// The soak's load: HTTP/1.1 keep-alive GETs sent at a fixed rate whatever the answers take (an
// open loop, so a stall shows as failures and a backlog, not as a slower client), each outcome
// kept with its time so that the report can tell a killed worker's requests from the others.

import * as http from 'node:http';

export interface Failure {
  /** Milliseconds since the load started. */
  readonly atMs: number;
  readonly reason: string;
}

/** Sends at `ratePerSecond` to `port` until stop(); `maxInFlight` caps the backlog (those not sent are counted). */
export class PacedLoad {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  private readonly started = performance.now();
  private timer: NodeJS.Timeout | null = null;
  private owed = 0;
  private inFlight = 0;
  sent = 0;
  succeeded = 0;
  /** Not sent: the backlog was at maxInFlight (the proxy or the machine could not keep up). */
  skipped = 0;
  readonly failures: Failure[] = [];

  constructor(
    private readonly port: number,
    private readonly ratePerSecond: number,
    readonly maxInFlight = 2_000,
  ) {}

  start(): void {
    const tickMs = 10;
    this.timer = setInterval(() => {
      this.owed += (this.ratePerSecond * tickMs) / 1000;
      for (; this.owed >= 1; this.owed--) {
        if (this.inFlight >= this.maxInFlight) this.skipped++;
        else this.send();
      }
    }, tickMs);
  }

  /** Stops sending and waits (at most `graceMs`) for the requests in flight. */
  async stop(graceMs = 10_000): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    const deadline = performance.now() + graceMs;
    while (this.inFlight > 0 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    this.agent.destroy();
  }

  /** Milliseconds since the load started, on the clock failures are stamped with. */
  elapsedMs(): number {
    return performance.now() - this.started;
  }

  private send(): void {
    this.sent++;
    this.inFlight++;
    const done = (reason: string | null): void => {
      this.inFlight--;
      if (reason === null) this.succeeded++;
      else this.failures.push({ atMs: this.elapsedMs(), reason });
    };
    const req = http.get({ host: '127.0.0.1', port: this.port, path: '/', agent: this.agent }, (res) => {
      let body = '';
      res.setEncoding('latin1');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => done(res.statusCode === 200 && body === 'Hello, World!' ? null : `status ${res.statusCode}`));
      res.on('error', (e) => done(e.message));
    });
    req.setTimeout(10_000, () => req.destroy(new Error('no answer in 10 s')));
    req.on('error', (e: NodeJS.ErrnoException) => done(e.code ?? e.message));
  }
}

/** Requests per second the proxy answers with `concurrency` requests always outstanding, over `ms`. */
export async function saturation(port: number, concurrency: number, ms: number): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const deadline = performance.now() + ms;
  let answered = 0;
  const loop = async (): Promise<void> => {
    while (performance.now() < deadline) {
      await new Promise<void>((resolve) => {
        const req = http.get({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
          res.resume();
          res.on('end', () => {
            answered++;
            resolve();
          });
        });
        req.on('error', () => resolve());
      });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  agent.destroy();
  return (answered * 1000) / ms;
}
