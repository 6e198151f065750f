// The supervisor gives every host of every cluster a slot in the region's host table (its
// /clusters statistics and health flags), and hands the assignment to the workers, so all of
// them count a host into the same slot. Slots go back to the table when the epoch ends.

import type { ClusterConfig } from '../config/model';
import type { HostTable } from '../stats/host_table';
import type { HostSlot } from '../stats/stats';
import type { HostSlotAssignments } from '../server/worker_protocol';
import { addressString } from './address';

export class HostSlotMissingError extends Error {}

export function assignHostSlots(clusters: readonly ClusterConfig[], table: HostTable): HostSlotAssignments {
  const out: Record<string, Record<string, HostSlot>> = {};
  for (const cluster of clusters) {
    const slots: Record<string, HostSlot> = {};
    for (const group of cluster.loadAssignment.endpoints) {
      for (const endpoint of group.lbEndpoints) {
        const address = addressString(endpoint.address);
        slots[address] ??= table.allocate();
      }
    }
    out[cluster.name] = slots;
  }
  return out;
}

export function freeHostSlots(assignments: HostSlotAssignments, table: HostTable): void {
  for (const slots of Object.values(assignments)) for (const slot of Object.values(slots)) table.free(slot);
}

/** The slot of `address` in `cluster`, as the supervisor assigned it. */
export function hostSlotOf(assignments: HostSlotAssignments, cluster: string, address: string): HostSlot {
  const slot = assignments[cluster]?.[address];
  if (slot === undefined) throw new HostSlotMissingError(`no host stats slot for ${address} in cluster '${cluster}'`);
  return slot;
}
