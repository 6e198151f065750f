// What a host's health costs a worker's pick, for the two ways the supervisor could tell the
// workers: in its membership update messages (the design: the balancer's healthy lists are
// rebuilt when an update arrives, a pick reads nothing shared), or in the per-host health word
// of the stats region's host table (a pick would load the chosen host's word with Atomics and
// rebuild when it changed). Prints ns per pick for each, on a 10-host round robin cluster.
//
//   node dist/bench/pick_cost.js              (part of `make bench`)

import { createHeapStatsStore } from '../src/stats/store';
import { Host } from '../src/upstream/worker/host';
import { LOAD_BALANCERS } from '../src/upstream/worker/lb/load_balancer_registry';
import { balancerParams } from '../test/helpers/load_balancer';
import { DEFAULT_OVERPROVISIONING_FACTOR } from '../src/config/model';

const HOSTS = 10;
const PICKS = 20_000_000;
const RUNS = 5;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function main(): void {
  const store = createHeapStatsStore();
  const hosts = Array.from({ length: HOSTS }, (_, i) => {
    const slot = store.hosts.allocate();
    return new Host('10.0.0.1', 8000 + i, { hostname: '', weight: 1, priority: 0, locality: { region: '', zone: '', subZone: '' }, healthFlags: 0, slot });
  });
  const params = balancerParams(hosts);
  const set = params.prioritySet;
  const lb = LOAD_BALANCERS.get('ROUND_ROBIN')!.create(params);
  // The shared variant: each host's health word, located once, loaded at every pick.
  const words = new Map(hosts.map((h) => [h, store.hosts.healthFlags(h.slot!.slot)]));

  const byMessage = (): number => {
    let sink = 0;
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < PICKS; i++) sink += lb.chooseHost(null)!.port;
    const ns = Number(process.hrtime.bigint() - t0) / PICKS;
    if (sink === 0) throw new Error('unreachable');
    return ns;
  };
  const bySharedWord = (): number => {
    let sink = 0;
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < PICKS; i++) {
      const host = lb.chooseHost(null)!;
      const word = words.get(host)!;
      const flags = Atomics.load(word.words, word.index);
      if (flags !== host.healthFlags) {
        host.healthFlags = flags;
        set.update(hosts, DEFAULT_OVERPROVISIONING_FACTOR);
        lb.refresh();
      }
      sink += host.port;
    }
    const ns = Number(process.hrtime.bigint() - t0) / PICKS;
    if (sink === 0) throw new Error('unreachable');
    return ns;
  };

  // Interleaved runs, so that both see the same machine.
  const message: number[] = [];
  const shared: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    message.push(byMessage());
    shared.push(bySharedWord());
  }
  const m = median(message);
  const s = median(shared);
  console.log(`pick cost, round robin over ${HOSTS} hosts, median of ${RUNS} runs of ${PICKS} picks`);
  console.log(`  health by update message   ${m.toFixed(1)} ns/pick`);
  console.log(`  health word in shared mem  ${s.toFixed(1)} ns/pick (${(s / m).toFixed(2)}x)`);
}

main();
