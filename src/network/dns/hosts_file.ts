// The hosts file, consulted before DNS as in c-ares's default lookup order ("files, then bind").
// c-ares reads it on every lookup, so an edit takes effect without a restart; so does ours.

import * as fs from 'node:fs/promises';
import * as net from 'node:net';

export const HOSTS_FILE_PATH = '/etc/hosts';

export type AddressFamily = 4 | 6;

export class HostsTable {
  constructor(private readonly entries: ReadonlyMap<string, readonly { address: string; family: AddressFamily }[]>) {}

  /** The addresses of `name` in `family`, in file order; empty when the file has none. */
  lookup(name: string, family: AddressFamily): string[] {
    const found = this.entries.get(name.toLowerCase().replace(/\.$/, '')) ?? [];
    return found.filter((entry) => entry.family === family).map((entry) => entry.address);
  }
}

export function parseHostsFile(text: string): HostsTable {
  const entries = new Map<string, { address: string; family: AddressFamily }[]>();
  for (const rawLine of text.split('\n')) {
    const [address, ...names] = rawLine.replace(/#.*$/, '').trim().split(/\s+/);
    if (address === undefined || names.length === 0) continue;
    const family = net.isIP(address.replace(/%.*$/, ''));
    if (family === 0) continue;
    for (const name of names) {
      const key = name.toLowerCase();
      const list = entries.get(key) ?? [];
      if (!list.some((entry) => entry.address === address)) list.push({ address, family: family as AddressFamily });
      entries.set(key, list);
    }
  }
  return new HostsTable(entries);
}

/** A missing or unreadable file reads as an empty one. */
export async function readHostsFile(path: string = HOSTS_FILE_PATH): Promise<HostsTable> {
  const text = await fs.readFile(path, 'utf8').catch(() => '');
  return parseHostsFile(text);
}
