// How long the supervisor keeps its admin waiting while it applies a large update: GET a path
// over and over and keep the longest answer.

import * as http from 'node:http';

/** One GET to the admin with no timeout: a stalled supervisor must show as a long answer, not an error. */
function timedGet(port: number, urlPath: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: urlPath, agent: false }, (response) => {
        response.resume();
        response.on('end', () => resolve(performance.now() - started));
      })
      .on('error', reject);
  });
}

/**
 * GET `urlPath` every `intervalMs` (the next one once the last has answered) until stop(), which
 * resolves to the longest answer: how long the supervisor's event loop kept its admin waiting.
 */
export function pollLatency(port: number, urlPath: string, intervalMs: number): { stop(): Promise<number> } {
  let running = true;
  let worst = 0;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      worst = Math.max(worst, await timedGet(port, urlPath));
      await new Promise((r) => setTimeout(r, Math.max(0, intervalMs - (performance.now() - started))));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return worst;
    },
  };
}
