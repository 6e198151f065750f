// STRICT_DNS and LOGICAL_DNS discovery against a real DNS server on loopback, with the refresh
// schedule on a ManualClock so the delays are read, not waited for.

import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';

import { SystemClock } from '../../src/common/clock';
import type { LbEndpoint, LocalityLbEndpoints } from '../../src/config/model';
import { DEFAULT_DNS_TIMEOUT_MS, DEFAULT_DNS_TRIES } from '../../src/network/dns/dns_client';
import { readResolvConf } from '../../src/network/dns/resolv_conf';
import { createDnsDiscovery } from '../../src/upstream/supervisor/dns/dns_discovery';
import { type DnsClusterSettings, type DnsDiscoveryStatName, DnsSettingsError } from '../../src/upstream/supervisor/dns/dns_cluster_settings';
import { JitteredExponentialBackOff } from '../../src/upstream/supervisor/dns/refresh_delays';
import { closedDnsServer, type DnsTestServer, dnsTestServerForFile } from '../helpers/dns_test_server';
import { ManualClock } from '../helpers/manual_clock';

const dnsServer = dnsTestServerForFile();
let server: DnsTestServer;
beforeEach(() => {
  server = dnsServer();
});

/** Counters a test can wait on. */
class RecordingStats {
  readonly counts: Record<DnsDiscoveryStatName, number> = { update_attempt: 0, update_success: 0, update_failure: 0, update_no_rebuild: 0 };
  private waiters: (() => void)[] = [];
  readonly stats = Object.fromEntries(
    (Object.keys(this.counts) as DnsDiscoveryStatName[]).map((name) => [
      name,
      {
        inc: () => {
          this.counts[name]++;
          const waiters = this.waiters;
          this.waiters = [];
          waiters.forEach((wake) => wake());
        },
      },
    ]),
  ) as Record<DnsDiscoveryStatName, { inc(): void }>;

  /**
   * Resolves once success + failure reaches `n`: that many resolutions have completed. Rejects
   * after `withinMs`, so that a test whose resolution never ends still gets to close it.
   */
  async completed(n: number, withinMs = 5000): Promise<void> {
    const deadline = performance.now() + withinMs;
    while (this.counts.update_success + this.counts.update_failure < n) {
      const left = deadline - performance.now();
      if (left <= 0) throw new Error(`${n} resolutions not completed within ${withinMs} ms: ${JSON.stringify(this.counts)}`);
      await new Promise<void>((wake) => {
        this.waiters.push(wake);
        setTimeout(wake, left).unref();
      });
    }
    // Let the resolution's continuation (update, timer) run.
    await new Promise((resolve) => setImmediate(resolve));
  }
}

function endpoint(name: string, port: number, extra: Partial<LbEndpoint> = {}): LbEndpoint {
  return { address: { address: name, port }, hostname: '', healthStatus: 'UNKNOWN', loadBalancingWeight: 1, metadata: {}, ...extra };
}

function group(endpoints: LbEndpoint[], extra: Partial<LocalityLbEndpoints> = {}): LocalityLbEndpoints {
  return { locality: { region: 'r', zone: 'z', subZone: '' }, priority: 0, loadBalancingWeight: 0, lbEndpoints: endpoints, ...extra };
}

function settings(type: DnsClusterSettings['type'], endpoints: LocalityLbEndpoints[], extra: Partial<DnsClusterSettings> = {}): DnsClusterSettings {
  return {
    clusterName: 'c',
    type,
    endpoints,
    dnsRefreshRateMs: 5000,
    dnsFailureRefreshRate: null,
    respectDnsTtl: false,
    dnsLookupFamily: 'V4_ONLY',
    dnsResolvers: [server.address],
    useTcpForDnsLookups: false,
    ...extra,
  };
}

function start(clusterSettings: DnsClusterSettings, options: { clock?: ManualClock; random?: () => number } = {}) {
  const clock = options.clock ?? new ManualClock();
  const recorder = new RecordingStats();
  const updates: LocalityLbEndpoints[][] = [];
  const discovery = createDnsDiscovery(clusterSettings, { clock, random: options.random ?? (() => 0), stats: recorder.stats }, (endpoints) => updates.push(endpoints));
  return { clock, recorder, updates, discovery };
}

/** The addresses of each group of an update. */
function addresses(update: LocalityLbEndpoints[] | undefined): string[][] {
  return (update ?? []).map((g) => g.lbEndpoints.map((e) => `${e.address.address}:${e.address.port}`));
}

test('strict: every address of every name is a host, with the configured port, weight and hostname', { timeout: 10_000 }, async () => {
  server.zone.set('a.test', { a: [{ address: '10.0.0.1', ttl: 30 }, { address: '10.0.0.2', ttl: 30 }] });
  server.zone.set('b.test', { a: [{ address: '10.0.1.1', ttl: 30 }] });
  const { clock, recorder, updates, discovery } = start(
    settings('STRICT_DNS', [
      group([endpoint('a.test', 80, { loadBalancingWeight: 7, metadata: { k: 'v' } })], { priority: 0 }),
      group([endpoint('b.test', 81, { hostname: 'named' })], { priority: 1, loadBalancingWeight: 3 }),
    ]),
  );
  try {
    await discovery.initialized;
    await recorder.completed(2);
    const last = updates.at(-1)!;
    assert.deepEqual(addresses(last), [['10.0.0.1:80', '10.0.0.2:80'], ['10.0.1.1:81']]);
    assert.deepEqual(last[0]!.lbEndpoints[0], { address: { address: '10.0.0.1', port: 80 }, hostname: 'a.test', healthStatus: 'UNKNOWN', loadBalancingWeight: 7, metadata: { k: 'v' } });
    assert.equal(last[1]!.lbEndpoints[0]!.hostname, 'named');
    assert.deepEqual({ priority: last[1]!.priority, weight: last[1]!.loadBalancingWeight }, { priority: 1, weight: 3 });
    assert.deepEqual(recorder.counts, { update_attempt: 2, update_success: 2, update_failure: 0, update_no_rebuild: 0 });
    // Each name waits the refresh rate (the TTL is not respected here).
    assert.deepEqual(clock.pendingDelays(), [5000, 5000]);
  } finally {
    discovery.close();
  }
});

test('strict: hosts are diffed by address; the same set in another order is no rebuild', { timeout: 10_000 }, async () => {
  server.zone.set('a.test', { a: [{ address: '10.0.0.1', ttl: 1 }, { address: '10.0.0.2', ttl: 1 }] });
  const { clock, recorder, updates, discovery } = start(settings('STRICT_DNS', [group([endpoint('a.test', 80)])]));
  try {
    await recorder.completed(1);
    assert.equal(updates.length, 1);

    server.zone.set('a.test', { a: [{ address: '10.0.0.2', ttl: 1 }, { address: '10.0.0.1', ttl: 1 }, { address: '10.0.0.1', ttl: 1 }] });
    clock.advance(5000);
    await recorder.completed(2);
    assert.equal(updates.length, 1, 'reordered and repeated: no update');
    assert.equal(recorder.counts.update_no_rebuild, 1);

    server.zone.set('a.test', { a: [{ address: '10.0.0.2', ttl: 1 }, { address: '10.0.0.3', ttl: 1 }] });
    clock.advance(5000);
    await recorder.completed(3);
    assert.deepEqual(addresses(updates.at(-1)), [['10.0.0.2:80', '10.0.0.3:80']]);

    // An error keeps the hosts; so does a name gone (NXDOMAIN), which c-ares reports to Envoy as a failure.
    server.zone.set('a.test', { rcode: 'SERVFAIL' });
    clock.advance(5000);
    await recorder.completed(4);
    assert.equal(updates.length, 2);
    server.zone.delete('a.test');
    clock.advance(5000);
    await recorder.completed(5);
    assert.equal(updates.length, 2);
    assert.deepEqual(addresses(updates.at(-1)), [['10.0.0.2:80', '10.0.0.3:80']]);
    assert.deepEqual(recorder.counts, { update_attempt: 5, update_success: 3, update_failure: 2, update_no_rebuild: 1 });
  } finally {
    discovery.close();
  }
});

test('respect_dns_ttl: the next refresh is at the smallest TTL, or the refresh rate when it is 0', { timeout: 10_000 }, async () => {
  server.zone.set('a.test', { a: [{ address: '10.0.0.1', ttl: 30 }, { address: '10.0.0.2', ttl: 12 }] });
  const { clock, recorder, discovery } = start(settings('STRICT_DNS', [group([endpoint('a.test', 80)])], { respectDnsTtl: true }));
  try {
    await recorder.completed(1);
    assert.deepEqual(clock.pendingDelays(), [12_000]);
    clock.advance(11_999);
    assert.equal(server.count('a.test'), 1, 'not before the TTL');
    server.zone.set('a.test', { a: [{ address: '10.0.0.1', ttl: 0 }] });
    clock.advance(1);
    await recorder.completed(2);
    assert.equal(server.count('a.test'), 2);
    assert.deepEqual(clock.pendingDelays(), [5000]);
  } finally {
    discovery.close();
  }
});

test('respect_dns_ttl: a TTL past one Node timer\'s range is waited in full (the clock re-arms); one with the top bit set is 0', { timeout: 10_000 }, async () => {
  // 2,147,484 s is more than one Node setTimeout takes (2^31 - 1 ms): the clock handles it, as Envoy's does.
  server.zone.set('a.test', { a: [{ address: '10.0.0.1', ttl: 2_147_484 }] });
  const { clock, recorder, discovery } = start(settings('STRICT_DNS', [group([endpoint('a.test', 80)])], { respectDnsTtl: true }));
  try {
    await recorder.completed(1);
    assert.deepEqual(clock.pendingDelays(), [2_147_484_000]);
    server.zone.set('a.test', { a: [{ address: '10.0.0.1', ttl: 2 ** 32 - 1 }] });
    clock.advance(2_147_484_000);
    await recorder.completed(2);
    assert.deepEqual(clock.pendingDelays(), [5000], 'the refresh rate, as for a TTL of 0');
  } finally {
    discovery.close();
  }
});

test('a failure backoff past one Node timer\'s range is waited in full', { timeout: 10_000 }, async () => {
  server.zone.set('a.test', { rcode: 'SERVFAIL' });
  const year = 365 * 86_400_000;
  const { clock, recorder, discovery } = start(settings('STRICT_DNS', [group([endpoint('a.test', 80)])], { dnsRefreshRateMs: year }));
  try {
    await recorder.completed(1);
    assert.deepEqual(clock.pendingDelays(), [year]);
  } finally {
    discovery.close();
  }
});

test('a malformed answer is a failure that keeps the hosts and backs off; never a host', { timeout: 10_000 }, async () => {
  for (const type of ['STRICT_DNS', 'LOGICAL_DNS'] as const) {
    server.zone.set('a.test', { a: [{ address: '10.0.0.1', ttl: 1 }] });
    const { clock, recorder, updates, discovery } = start(settings(type, [group([endpoint('a.test', 80)])], { dnsFailureRefreshRate: { baseMs: 1000, maxMs: 4000 } }), {
      random: () => 777,
    });
    try {
      await recorder.completed(1);
      assert.deepEqual(addresses(updates.at(-1)), [['10.0.0.1:80']]);
      const damaged: Partial<Record<string, number>>[] = [{ cutBytes: 2 }, { cutBytes: 9 }, { addressLength: 6 }, { addressLength: 2 }];
      for (const [n, damage] of damaged.entries()) {
        server.zone.set('a.test', { ...damage, a: [{ address: '10.0.0.2', ttl: 1 }] });
        clock.advance(clock.pendingDelays()[0]!);
        await recorder.completed(2 + n);
        assert.equal(updates.length, 1, `${type} ${JSON.stringify(damage)}: no update`);
      }
      assert.deepEqual(recorder.counts, { update_attempt: 5, update_success: 1, update_failure: 4, update_no_rebuild: 0 });
      assert.deepEqual(clock.pendingDelays(), [777 % 4000], 'the failure backoff');
    } finally {
      discovery.close();
    }
  }
});

test('a resolver whose port is closed: every attempt fails at once, counted, and the next follows the backoff', { timeout: 10_000 }, async () => {
  const { clock, recorder, discovery } = start(
    settings('STRICT_DNS', [group([endpoint('a.test', 80)])], { dnsResolvers: [await closedDnsServer()], dnsLookupFamily: 'AUTO', dnsFailureRefreshRate: { baseMs: 1000, maxMs: 4000 } }),
    { random: () => 1999 },
  );
  try {
    // The query timers never fire on this clock: only the refused connection can end the attempt.
    const delays: number[] = [];
    for (let n = 1; n <= 3; n++) {
      await recorder.completed(n);
      delays.push(clock.pendingDelays()[0]!);
      clock.advance(delays.at(-1)!);
    }
    assert.deepEqual(recorder.counts, { update_attempt: 4, update_success: 0, update_failure: 3, update_no_rebuild: 0 });
    // 1999 % 1000, % 2000, % 4000.
    assert.deepEqual(delays, [999, 1999, 1999]);
  } finally {
    discovery.close();
  }
});

test('a silent resolver: the attempt ends in a counted failure once every try has timed out', { timeout: 10_000 }, async () => {
  server.zone.set('a.test', { silent: true });
  const conf = await readResolvConf();
  const [timeoutMs, tries] = [conf.timeoutMs ?? DEFAULT_DNS_TIMEOUT_MS, conf.attempts ?? DEFAULT_DNS_TRIES];
  const { clock, recorder, discovery } = start(settings('STRICT_DNS', [group([endpoint('a.test', 80)])], { dnsFailureRefreshRate: { baseMs: 1000, maxMs: 4000 } }), { random: () => 1999 });
  try {
    let waited = 0;
    for (let n = 1; n <= tries; n++) {
      while (server.count('a.test') < n) await new Promise((resolve) => setImmediate(resolve));
      const [delay] = clock.pendingDelays();
      clock.advance(delay!);
      waited += delay!;
    }
    await recorder.completed(1);
    // c-ares's schedule: the timeout doubles after each round of the (one) server.
    assert.equal(waited, timeoutMs * (2 ** tries - 1));
    assert.deepEqual(recorder.counts, { update_attempt: 1, update_success: 0, update_failure: 1, update_no_rebuild: 0 });
    assert.deepEqual(clock.pendingDelays(), [999], 'the next attempt at the failure backoff');
  } finally {
    discovery.close();
  }
});

test('failures back off with full jitter from base, doubling to max, and reset on success', { timeout: 10_000 }, async () => {
  server.zone.set('a.test', { rcode: 'SERVFAIL' });
  const { clock, recorder, discovery } = start(settings('STRICT_DNS', [group([endpoint('a.test', 80)])], { dnsFailureRefreshRate: { baseMs: 1000, maxMs: 5000 } }), {
    random: () => 999_999,
  });
  try {
    const delays: number[] = [];
    for (let n = 1; n <= 5; n++) {
      await recorder.completed(n);
      const [delay] = clock.pendingDelays();
      delays.push(delay!);
      clock.advance(delay!);
    }
    // 999999 % 1000, % 2000, % 4000, then % 5000 (the max) for good.
    assert.deepEqual(delays, [999, 1999, 3999, 4999, 4999]);
    server.zone.set('a.test', { a: [{ address: '10.0.0.1', ttl: 1 }] });
    await recorder.completed(6);
    assert.deepEqual(clock.pendingDelays(), [5000]);
    server.zone.set('a.test', { rcode: 'SERVFAIL' });
    clock.advance(5000);
    await recorder.completed(7);
    assert.deepEqual(clock.pendingDelays(), [999], 'back to the base interval');
  } finally {
    discovery.close();
  }
});

test('without dns_failure_refresh_rate a failure retries at the refresh rate', { timeout: 10_000 }, async () => {
  server.zone.set('a.test', { rcode: 'REFUSED' });
  const { clock, recorder, discovery } = start(settings('STRICT_DNS', [group([endpoint('a.test', 80)])], { dnsRefreshRateMs: 2500 }));
  try {
    await discovery.initialized;
    await recorder.completed(1);
    assert.deepEqual(recorder.counts, { update_attempt: 1, update_success: 0, update_failure: 1, update_no_rebuild: 0 });
    assert.deepEqual(clock.pendingDelays(), [2500]);
  } finally {
    discovery.close();
  }
});

test('the backoff strategy alone: the interval caps at max', () => {
  const values = [5, 7, 9, 11, 13];
  const backOff = new JitteredExponentialBackOff(10, 35, () => 1000 + values.shift()!);
  assert.deepEqual([1, 2, 3, 4, 5].map(() => backOff.nextBackOffMs()), [1005 % 10, 1007 % 20, 1009 % 35, 1011 % 35, 1013 % 35]);
});

test('initialized waits for the first resolution of every name, failed or empty', { timeout: 10_000 }, async () => {
  server.zone.set('fast.test', { a: [{ address: '10.0.0.1', ttl: 1 }] });
  server.zone.set('slow.test', { hold: true, rcode: 'SERVFAIL' });
  const { recorder, updates, discovery } = start(settings('STRICT_DNS', [group([endpoint('fast.test', 80), endpoint('slow.test', 80), endpoint('gone.test', 80)])]));
  try {
    let initialized = false;
    void discovery.initialized.then(() => (initialized = true));
    await recorder.completed(2);
    assert.equal(updates.length, 1);
    assert.equal(initialized, false, 'slow.test has not answered yet');
    // SERVFAIL moves on to the next try (4 per server by default): release until all are answered.
    // gone.test (NXDOMAIN) has failed already; slow.test is the second failure.
    while (recorder.counts.update_failure < 2) {
      server.release();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await discovery.initialized;
    assert.deepEqual(recorder.counts, { update_attempt: 3, update_success: 1, update_failure: 2, update_no_rebuild: 0 });
  } finally {
    discovery.close();
  }
});

test('use_tcp_for_dns_lookups: the server sees TCP only', { timeout: 10_000 }, async () => {
  server.zone.set('a.test', { a: [{ address: '10.0.0.1', ttl: 1 }] });
  const { updates, discovery } = start(settings('STRICT_DNS', [group([endpoint('a.test', 80)])], { useTcpForDnsLookups: true, dnsLookupFamily: 'AUTO' }));
  try {
    await discovery.initialized;
    assert.deepEqual(addresses(updates.at(-1)), [['10.0.0.1:80']]);
    assert.deepEqual(server.queries.map((q) => `${q.type}/${q.transport}`), ['AAAA/tcp', 'A/tcp']);
  } finally {
    discovery.close();
  }
});

test('logical: one host that follows the first address of the answer', { timeout: 10_000 }, async () => {
  server.zone.set('l.test', { a: [{ address: '10.0.0.1', ttl: 20 }, { address: '10.0.0.2', ttl: 40 }] });
  const { clock, recorder, updates, discovery } = start(
    settings('LOGICAL_DNS', [group([endpoint('l.test', 443, { loadBalancingWeight: 5 })], { priority: 2 })], { respectDnsTtl: true, dnsFailureRefreshRate: { baseMs: 100, maxMs: 1000 } }),
  );
  try {
    await discovery.initialized;
    await recorder.completed(1);
    assert.deepEqual(updates, [
      [
        {
          locality: { region: 'r', zone: 'z', subZone: '' },
          priority: 0,
          loadBalancingWeight: 0,
          lbEndpoints: [{ address: { address: '10.0.0.1', port: 443 }, hostname: 'l.test', healthStatus: 'UNKNOWN', loadBalancingWeight: 5, metadata: {} }],
        },
      ],
    ]);
    assert.deepEqual(clock.pendingDelays(), [20_000], "the first record's TTL");

    // Only the first address matters: a change behind it is no update.
    server.zone.set('l.test', { a: [{ address: '10.0.0.1', ttl: 20 }, { address: '10.0.0.9', ttl: 20 }] });
    clock.advance(20_000);
    await recorder.completed(2);
    assert.equal(updates.length, 1);

    server.zone.set('l.test', { a: [{ address: '10.0.0.7', ttl: 20 }] });
    clock.advance(20_000);
    await recorder.completed(3);
    assert.deepEqual(addresses(updates.at(-1)), [['10.0.0.7:443']]);

    // An empty answer is a failure: the host keeps its address and the backoff applies.
    server.zone.delete('l.test');
    clock.advance(20_000);
    await recorder.completed(4);
    assert.equal(updates.length, 2);
    assert.deepEqual(recorder.counts, { update_attempt: 4, update_success: 3, update_failure: 1, update_no_rebuild: 0 });
    assert.deepEqual(clock.pendingDelays(), [0], 'random() % 100 with random() = 0');
  } finally {
    discovery.close();
  }
});

test('logical: exactly one endpoint is required', () => {
  assert.throws(() => start(settings('LOGICAL_DNS', [group([endpoint('a.test', 1), endpoint('b.test', 1)])])), DnsSettingsError);
  assert.throws(() => start(settings('LOGICAL_DNS', [])), DnsSettingsError);
});

test('localhost resolves from /etc/hosts without a query', { timeout: 10_000 }, async () => {
  const { updates, discovery } = start(settings('STRICT_DNS', [group([endpoint('localhost', 8080)])]));
  try {
    await discovery.initialized;
    assert.deepEqual(addresses(updates.at(-1)), [['127.0.0.1:8080']]);
    assert.equal(server.count(), 0);
  } finally {
    discovery.close();
  }
});

test('on the system clock the name is resolved again every refresh interval', { timeout: 10_000 }, async () => {
  server.zone.set('tick.test', { a: [{ address: '10.0.0.1', ttl: 1 }] });
  const recorder = new RecordingStats();
  const discovery = createDnsDiscovery(settings('STRICT_DNS', [group([endpoint('tick.test', 80)])], { dnsRefreshRateMs: 50 }), { clock: new SystemClock(), random: () => 0, stats: recorder.stats }, () => {});
  try {
    const started = performance.now();
    await recorder.completed(4);
    const elapsed = performance.now() - started;
    assert.ok(elapsed >= 140 && elapsed < 5000, `4 resolutions took ${elapsed} ms`);
  } finally {
    discovery.close();
  }
});

test('close() stops the timers and abandons the query in flight, leaving no socket', { timeout: 10_000 }, async () => {
  server.zone.set('held.test', { hold: true, a: [{ address: '10.0.0.1', ttl: 1 }] });
  server.zone.set('quick.test', { a: [{ address: '10.0.0.2', ttl: 1 }] });
  const { clock, recorder, updates, discovery } = start(settings('STRICT_DNS', [group([endpoint('held.test', 80), endpoint('quick.test', 80)])]));
  await recorder.completed(1);
  while (server.count('held.test') === 0) await new Promise((resolve) => setTimeout(resolve, 5));
  const sockets = () => process.getActiveResourcesInfo().filter((kind) => kind === 'UDPWrap' || kind === 'TCPSocketWrap').length;
  // Let the finished query's socket finish closing: what is left is the server's and the held one.
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(sockets(), 2);
  discovery.close();
  assert.equal(clock.pending, 0, 'no refresh or query timer left');
  // A socket leaves the active list once its close has been processed.
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(sockets(), 1, "only the server's socket is left");
  server.release();
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(updates.length, 1, 'no update after close');
  assert.deepEqual(recorder.counts, { update_attempt: 2, update_success: 1, update_failure: 0, update_no_rebuild: 0 });
});
