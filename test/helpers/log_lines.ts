// The whole lines of a log file the proxy writes, read while it runs.

import * as fs from 'node:fs';
import { sleep } from './proxy_process';

/** The file's complete lines so far (none while it does not exist); a line still being written is left out. */
export function readLines(file: string): string[] {
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').slice(0, -1) : [];
}

/** The file's lines once there are at least `count`, or whatever there is after `ms`. */
export async function waitForLines(file: string, count: number, ms = 10_000): Promise<string[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const lines = readLines(file);
    if (lines.length >= count || Date.now() > deadline) return lines;
    await sleep(50);
  }
}
