// The supervisor's overload.<monitor>.pressure and overload.<action>.active gauges. Each worker
// runs its own overload manager and reports its pressures and actions (OverloadReport); a gauge
// summed over the workers' columns would add percents, so the supervisor sets them instead: the
// highest pressure of any worker, and 1 while the action is active in any worker (Envoy's 0 or 1).

import type { OverloadManagerConfig } from '../config/model';
import type { Gauge, Scope } from '../stats/stats';
import type { OverloadReport } from './overload_manager';

export class OverloadGauges {
  private readonly pressures: readonly Gauge[];
  private readonly actives: readonly Gauge[];
  /** The last report of each running worker, by index. */
  private readonly reports = new Map<number, OverloadReport>();

  constructor(config: OverloadManagerConfig, stats: Scope) {
    // As Envoy: pressure is this epoch's own, an action's state adds up across a hot restart.
    this.pressures = config.resourceMonitors.map((monitor) => stats.gauge(`overload.${monitor.name}.pressure`, 'never_import'));
    this.actives = config.actions.map((action) => stats.gauge(`overload.${action.name}.active`, 'accumulate'));
  }

  report(worker: number, report: OverloadReport): void {
    this.reports.set(worker, report);
    this.update();
  }

  /** A worker exited: its measures go with it (its replacement reports its own). */
  forget(worker: number): void {
    if (this.reports.delete(worker)) this.update();
  }

  private update(): void {
    const reports = [...this.reports.values()];
    this.pressures.forEach((gauge, i) => gauge.set(Math.max(0, ...reports.map((r) => r.pressures[i] ?? 0))));
    this.actives.forEach((gauge, i) => gauge.set(reports.some((r) => r.active[i]) ? 1 : 0));
  }
}
