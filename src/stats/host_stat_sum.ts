// One statistic of one host summed over every writer, cheap enough to read at each load
// balancer pick: the cells are located once, and again only after a block was made somewhere
// in the region (a writer's first use of the host's chunk: a worker's first request to it, a
// restarted worker). Blocks are never moved or freed, so located cells stay valid.

import type { HostTable } from './host_table';
import { HOST_STAT_NAMES, type HostStatName } from '../shared_memory/region_layout';

export class HostStatSum {
  private readonly stat: number;
  private views: Float64Array[] = [];
  private indexes: number[] = [];
  /** The region's allocation mark when the cells were located; NaN: never. */
  private locatedAt = NaN;

  constructor(
    private readonly hosts: HostTable,
    private readonly slot: number,
    stat: HostStatName,
  ) {
    this.stat = HOST_STAT_NAMES.indexOf(stat);
  }

  value(): number {
    const mark = this.hosts.allocationMark;
    if (mark !== this.locatedAt) {
      ({ views: this.views, indexes: this.indexes } = this.hosts.statCells(this.slot, this.stat));
      this.locatedAt = mark;
    }
    let sum = 0;
    for (let i = 0; i < this.views.length; i++) sum += this.views[i]![this.indexes[i]!]!;
    return sum;
  }
}
