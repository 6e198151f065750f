// A worker's overload manager (Envoy's OverloadManagerImpl). Envoy runs one per process; a worker
// is a process here, so each measures its own resources and acts on its own traffic. Every
// refresh_interval it reads each monitor: one still reading from the last refresh skips this one
// (skipped_updates), one that fails keeps its last pressure (failed_updates). An action is active
// while any of its triggers has fired; the data path reads it from the OverloadState.

import type { OverloadActionConfig, OverloadManagerConfig } from '../config/model';
import type { Logger } from '../log/logger_api';
import type { Counter, Scope } from '../stats/stats';
import { applyOverloadAction, type OverloadActionTargets } from './overload_actions';
import type { ResourceMonitor } from './resource_monitor';

/** What a worker tells the supervisor, whose gauges combine the workers' (overload_gauges.ts). */
export interface OverloadReport {
  /** Each monitor's pressure in whole percent, as Envoy's gauge holds it; null before its first reading. */
  readonly pressures: readonly (number | null)[];
  /** Whether each action is active. */
  readonly active: readonly boolean[];
}

export interface OverloadManagerDeps {
  readonly config: OverloadManagerConfig;
  /** The config's monitors, created by their descriptors' factories, in the same order. */
  readonly monitors: readonly ResourceMonitor[];
  /** What the actions turn on and off. */
  readonly targets: OverloadActionTargets;
  readonly stats: Scope;
  readonly log: Logger;
  /** Called when a pressure's whole percent or an action's state changes. */
  readonly onReport: (report: OverloadReport) => void;
}

interface MonitorSlot {
  readonly monitor: ResourceMonitor;
  readonly name: string;
  readonly failedUpdates: Counter;
  readonly skippedUpdates: Counter;
  pending: boolean;
  /** The last pressure read; undefined before the first. */
  pressure: number | undefined;
}

export class OverloadManager {
  private readonly slots: MonitorSlot[];
  private readonly active: boolean[];
  private reported: OverloadReport;
  private timer: NodeJS.Timeout | null = null;
  private readonly log: Logger;

  constructor(private readonly deps: OverloadManagerDeps) {
    const { config, stats } = deps;
    this.log = deps.log.forFile(__filename);
    this.slots = config.resourceMonitors.map((monitor, i) => ({
      monitor: deps.monitors[i],
      name: monitor.name,
      failedUpdates: stats.counter(`overload.${monitor.name}.failed_updates`),
      skippedUpdates: stats.counter(`overload.${monitor.name}.skipped_updates`),
      pending: false,
      pressure: undefined,
    }));
    this.active = config.actions.map(() => false);
    this.reported = { pressures: this.slots.map(() => null), active: this.active.slice() };
  }

  /** Reads the monitors every refresh_interval until close(). */
  start(): void {
    // Unreferenced: the listeners keep a worker alive, never this timer.
    this.timer = setInterval(() => this.refresh(), this.deps.config.refreshIntervalMs).unref();
  }

  close(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.deps.targets.heap?.close();
  }

  private refresh(): void {
    for (const slot of this.slots) {
      if (slot.pending) {
        slot.skippedUpdates.inc();
        continue;
      }
      slot.pending = true;
      slot.monitor.read().then(
        (pressure) => {
          slot.pending = false;
          slot.pressure = pressure;
          this.update();
        },
        (error: Error) => {
          slot.pending = false;
          slot.failedUpdates.inc();
          this.log.info(`Failed to update resource ${slot.name}: ${error.message}`);
        },
      );
    }
  }

  private update(): void {
    const { config, targets } = this.deps;
    const log = this.log;
    const pressures = this.slots.map((slot) => slot.pressure);
    config.actions.forEach((action, i) => {
      const active = isActionActive(action, pressures);
      if (active === this.active[i]) return;
      this.active[i] = active;
      applyOverloadAction(targets, action.kind, active);
      log.info(`Overload action ${action.name} became ${active ? 'active' : 'inactive'}`);
    });
    const report: OverloadReport = { pressures: pressures.map((p) => (p === undefined ? null : Math.trunc(p * 100))), active: this.active.slice() };
    if (!sameReport(report, this.reported)) {
      this.reported = report;
      this.deps.onReport(report);
    }
  }
}

/** Whether any trigger of `action` has fired: its monitor's last pressure at or above its threshold. */
export function isActionActive(action: OverloadActionConfig, pressures: readonly (number | undefined)[]): boolean {
  return action.triggers.some((trigger) => {
    const pressure = pressures[trigger.monitor];
    return pressure !== undefined && pressure >= trigger.threshold;
  });
}

function sameReport(a: OverloadReport, b: OverloadReport): boolean {
  return a.pressures.every((p, i) => p === b.pressures[i]) && a.active.every((x, i) => x === b.active[i]);
}
