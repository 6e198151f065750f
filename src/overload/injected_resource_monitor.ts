// proxy.resource_monitors.injected_resource: the pressure is the number written in a file, for
// tests and for operators who compute it elsewhere. Read at every refresh; a file that is missing,
// not a number or outside [0, 1] is a failed update, as Envoy's.

import { readFile } from 'node:fs/promises';
import type { ResourceMonitor } from './resource_monitor';

export class InjectedResourceMonitor implements ResourceMonitor {
  constructor(private readonly filename: string) {}

  async read(): Promise<number> {
    const text = (await readFile(this.filename, 'utf8')).trim();
    const pressure = text === '' ? NaN : Number(text);
    if (Number.isNaN(pressure)) throw new Error(`failed to parse injected resource pressure from ${this.filename}`);
    if (pressure < 0 || pressure > 1) throw new Error(`pressure ${pressure} out of range [0, 1] in ${this.filename}`);
    return pressure;
  }
}
