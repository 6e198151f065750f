// A DNS client (it asks recursive servers) with c-ares's behaviour as Envoy 1.16 uses it: IP literals answer themselves,
// then the hosts file, then DNS, through resolv.conf's search list (a name found in no domain,
// or SERVFAIL there, moves on to the next). Each try goes to the next server in turn; a timeout or a
// SERVFAIL/REFUSED-like answer or a refused connection moves on, and after every server has had
// a try the timeout doubles. c-ares defaults: 5 s timeout, 4 tries per server, unless
// resolv.conf's `options` say otherwise. A truncated UDP answer is asked again over TCP to the
// same server; a malformed answer ends the lookup, as c-ares's EBADRESP does.

import { randomInt } from 'node:crypto';
import * as net from 'node:net';

import { type Clock, SystemClock } from '../../common/clock';
import { DnsAbortedError, type DnsError, DnsMalformedResponseError, DnsServerError, DnsTimeoutError, DnsTransportError } from './dns_errors';
import { type AddressRecordType, type DnsAddress, type DnsVerdict, encodeQuery, judgeResponse } from './dns_message';
import { ExchangeError, runExchange, type Transport } from './dns_transport';
import { type AddressFamily, HOSTS_FILE_PATH, readHostsFile } from './hosts_file';
import { type DnsServer, readResolvConf, RESOLV_CONF_PATH, type ResolvConf, searchNames } from './resolv_conf';

export type DnsLookupFamily = 'AUTO' | 'V4_ONLY' | 'V6_ONLY';

export const DEFAULT_DNS_TIMEOUT_MS = 5000;
export const DEFAULT_DNS_TRIES = 4;

/** What DNS discovery needs of a resolver. */
export interface DnsResolver {
  /**
   * The addresses of `name`: empty when the name does not exist or has none of the family
   * (not an error); rejects with a DnsError when no server gave a usable answer.
   */
  resolve(name: string, family: DnsLookupFamily, signal?: AbortSignal): Promise<DnsAddress[]>;
}

export interface DnsClientOptions {
  /** The servers to ask; empty or absent means resolv.conf's. */
  readonly servers?: readonly DnsServer[];
  /** Every query over TCP, never UDP (use_tcp_for_dns_lookups). */
  readonly useTcp?: boolean;
  /** First-try timeout; defaults to resolv.conf's `timeout:`, else 5 s. */
  readonly timeoutMs?: number;
  /** Tries per server; defaults to resolv.conf's `attempts:`, else 4. */
  readonly tries?: number;
  readonly clock?: Clock;
  readonly hostsPath?: string;
  readonly resolvConfPath?: string;
}

interface ChannelConfig extends Pick<ResolvConf, 'search' | 'ndots'> {
  readonly servers: readonly DnsServer[];
  readonly timeoutMs: number;
  readonly tries: number;
}

const FAMILY_OF: Record<AddressRecordType, AddressFamily> = { A: 4, AAAA: 6 };

export class DnsClient implements DnsResolver {
  private readonly clock: Clock;
  /** resolv.conf is read once, at the first lookup, as c-ares reads it at channel start. */
  private config: Promise<ChannelConfig> | null = null;

  constructor(private readonly options: DnsClientOptions = {}) {
    this.clock = options.clock ?? new SystemClock();
  }

  async resolve(name: string, family: DnsLookupFamily, signal?: AbortSignal): Promise<DnsAddress[]> {
    if (family === 'V4_ONLY') return this.resolveType(name, 'A', signal);
    if (family === 'V6_ONLY') return this.resolveType(name, 'AAAA', signal);
    // AUTO: IPv6 first; IPv4 when that gave nothing, whether empty or failed (Envoy 1.16).
    const v6 = await this.resolveType(name, 'AAAA', signal).catch((error: unknown) => {
      if (error instanceof DnsAbortedError) throw error;
      return [];
    });
    return v6.length > 0 ? v6 : this.resolveType(name, 'A', signal);
  }

  private async resolveType(name: string, type: AddressRecordType, signal: AbortSignal | undefined): Promise<DnsAddress[]> {
    const literalFamily = net.isIP(name);
    if (literalFamily !== 0) return literalFamily === FAMILY_OF[type] ? [{ address: name, ttlSeconds: 0 }] : [];
    const hosts = await readHostsFile(this.options.hostsPath ?? HOSTS_FILE_PATH);
    const fromFile = hosts.lookup(name, FAMILY_OF[type]);
    if (fromFile.length > 0) return fromFile.map((address) => ({ address, ttlSeconds: 0 }));
    return this.search(name, type, signal);
  }

  /**
   * ares_search: each candidate name in turn; an empty answer or a server error moves on, any
   * other failure ends the search. Nothing found: empty if some name exists without records
   * of the type or does not exist, else the error of the name as is.
   */
  private async search(name: string, type: AddressRecordType, signal: AbortSignal | undefined): Promise<DnsAddress[]> {
    const config = await this.channelConfig();
    let empty = false;
    let lastError: DnsServerError | null = null;
    for (const candidate of searchNames(name, config)) {
      try {
        const addresses = await this.query(candidate, type, signal);
        if (addresses.length > 0) return addresses;
        empty = true;
      } catch (error) {
        if (!(error instanceof DnsServerError)) throw error;
        lastError = error;
      }
    }
    if (empty || lastError === null) return [];
    throw lastError;
  }

  private async query(name: string, type: AddressRecordType, signal: AbortSignal | undefined): Promise<DnsAddress[]> {
    const { servers, timeoutMs, tries } = await this.channelConfig();
    let lastError: DnsError = new DnsTimeoutError(name);
    for (let attempt = 0; attempt < servers.length * tries; attempt++) {
      const server = servers[attempt % servers.length]!;
      const timeout = timeoutMs * 2 ** Math.floor(attempt / servers.length);
      const first = this.options.useTcp ? 'tcp' : 'udp';
      try {
        let verdict = await this.ask(server, first, name, type, timeout, signal);
        if (verdict.kind === 'truncated') verdict = await this.ask(server, 'tcp', name, type, timeout, signal);
        if (verdict.kind === 'addresses') return [...verdict.addresses];
        if (verdict.kind === 'malformed') throw new DnsMalformedResponseError(name, verdict.reason);
        if (verdict.kind === 'server-error') lastError = new DnsServerError(name, verdict.rcode);
      } catch (error) {
        if (!(error instanceof ExchangeError)) throw error;
        const failure = error.failure;
        if (failure.kind === 'aborted') throw new DnsAbortedError(name);
        lastError = failure.kind === 'timeout' ? new DnsTimeoutError(name) : new DnsTransportError(name, failure.error);
      }
    }
    throw lastError;
  }

  private ask(server: DnsServer, transport: Transport, name: string, type: AddressRecordType, timeoutMs: number, signal: AbortSignal | undefined): Promise<DnsVerdict> {
    const id = randomInt(0x1_0000);
    return runExchange({
      transport,
      server,
      query: encodeQuery(id, name, type),
      timeoutMs,
      clock: this.clock,
      signal,
      judge: (message) => judgeResponse(message, id, name, type, transport === 'tcp'),
    });
  }

  private channelConfig(): Promise<ChannelConfig> {
    this.config ??= readResolvConf(this.options.resolvConfPath ?? RESOLV_CONF_PATH).then((conf) => ({
      servers: this.options.servers !== undefined && this.options.servers.length > 0 ? this.options.servers : conf.servers,
      timeoutMs: this.options.timeoutMs ?? conf.timeoutMs ?? DEFAULT_DNS_TIMEOUT_MS,
      tries: this.options.tries ?? conf.attempts ?? DEFAULT_DNS_TRIES,
      search: conf.search,
      ndots: conf.ndots,
    }));
    return this.config;
  }
}
