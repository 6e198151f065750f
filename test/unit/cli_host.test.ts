import assert from 'node:assert/strict';
import type { NetworkInterfaceInfo } from 'node:os';
import { test } from 'node:test';
import { cpuListSize, cpusetFiles, cpusetThreads, hardwareThreads } from '../../src/cli/cpu_count';
import { localAddress } from '../../src/cli/local_address';

test('kernel CPU lists are counted', () => {
  assert.equal(cpuListSize('0-3\n'), 4);
  assert.equal(cpuListSize('0-1,4,6-7'), 5);
  assert.equal(cpuListSize('5'), 1);
  assert.equal(cpuListSize(''), 0);
  assert.equal(cpuListSize('3-1'), 0);
  assert.equal(cpuListSize('a-b'), 0);
});

test('the cpuset files of a cgroup: the v2 hierarchy first, then the v1 cpuset controller', () => {
  assert.deepEqual(cpusetFiles('0::/system.slice/proxy.service\n'), ['/sys/fs/cgroup/system.slice/proxy.service/cpuset.cpus.effective']);
  assert.deepEqual(cpusetFiles('12:cpu,cpuacct:/x\n3:cpuset:/docker/abc\n0::/\n'), [
    '/sys/fs/cgroup/cpuset.cpus.effective',
    '/sys/fs/cgroup/cpuset/docker/abc/cpuset.effective_cpus',
  ]);
  assert.deepEqual(cpusetFiles(''), []);
});

test('this process may use at least one and at most every hardware thread', () => {
  const threads = cpusetThreads();
  assert.ok(threads >= 1);
  assert.ok(threads <= hardwareThreads());
});

function nic(address: string, family: 'IPv4' | 'IPv6', internal: boolean): NetworkInterfaceInfo {
  const base = { address, netmask: '', mac: '00:00:00:00:00:00', internal, cidr: null };
  return family === 'IPv4' ? { ...base, family } : { ...base, family, scopeid: 0 };
}

test('the local address is the first non-loopback address of the family, else loopback', () => {
  const interfaces = {
    lo: [nic('127.0.0.1', 'IPv4', true), nic('::1', 'IPv6', true)],
    eth0: [nic('fe80::1', 'IPv6', false), nic('10.0.0.5', 'IPv4', false)],
    eth1: [nic('192.0.2.9', 'IPv4', false), nic('2001:db8::9', 'IPv6', false)],
  };
  assert.equal(localAddress(interfaces, 'v4'), '10.0.0.5');
  assert.equal(localAddress(interfaces, 'v6'), 'fe80::1');
  const loopbackOnly = { lo: interfaces.lo };
  assert.equal(localAddress(loopbackOnly, 'v4'), '127.0.0.1');
  assert.equal(localAddress(loopbackOnly, 'v6'), '::1');
  // An address in 127/8 is loopback even on an interface not marked internal.
  assert.equal(localAddress({ dummy: [nic('127.0.0.2', 'IPv4', false)] }, 'v4'), '127.0.0.1');
});
