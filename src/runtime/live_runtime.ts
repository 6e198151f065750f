// A worker's current runtime snapshot: replaced whole when the supervisor sends a new one, read
// by whatever decides per request (route runtime_fraction).

import { Runtime, RuntimeValues } from './runtime';

/** What a consumer of the runtime reads from: the snapshot of the moment. */
export interface RuntimeSource {
  snapshot(): Runtime;
}

export class LiveRuntime implements RuntimeSource {
  private current: Runtime;

  constructor(values: RuntimeValues) {
    this.current = new Runtime(values);
  }

  snapshot(): Runtime {
    return this.current;
  }

  replace(values: RuntimeValues): void {
    this.current = new Runtime(values);
  }
}
