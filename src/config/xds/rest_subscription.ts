// A subscription polled over REST (Envoy's HttpSubscriptionImpl on its RestApiFetcher): a JSON
// DiscoveryRequest POSTed to one host of the config source's cluster, carrying the last accepted
// version, every refresh_delay plus a jitter below it, each fetch bounded by request_timeout.
// A fetch that fails (connection, timeout, a status other than 200 or 304) is counted and the
// next poll comes as usual. Unlike Envoy 1.16, a 304 or an answer at the version already
// accepted is taken as "no change" rather than a failure or a second delivery.

import * as http from 'node:http';
import type { Clock, TimeoutHandle } from '../../common/clock';
import type { Logger } from '../../log/logger_api';
import { FieldError } from '../errors';
import type { JsonObject, JsonValue } from '../json';
import type { DiscoveryWire } from './discovery_wire';
import { type ClusterAddresses, ClusterHosts } from './cluster_hosts';
import type { ResourceDecoder } from './resource_decoder';
import type { ResourceType } from './resource_types';
import type { Subscription, SubscriptionCallbacks, SubscriptionStats } from './subscription';
import { versionHash } from './version_hash';
import type { RandomSource } from '../../common/random';

export interface RestSubscriptionOptions {
  readonly cluster: string;
  readonly path: string;
  readonly typeUrl: string;
  readonly type: ResourceType;
  readonly refreshDelayMs: number;
  readonly requestTimeoutMs: number;
  readonly initialFetchTimeoutMs: number;
}

export interface RestSubscriptionDeps {
  readonly wire: DiscoveryWire;
  readonly decoder: ResourceDecoder;
  readonly log: Logger;
  readonly clock: Clock;
  readonly random: RandomSource;
  readonly node: JsonObject;
  readonly clusterAddresses: ClusterAddresses;
}

export class RestSubscription implements Subscription {
  private readonly log: Logger;
  private resourceNames: readonly string[] = [];
  /** The last version accepted; null before the first. */
  private versionInfo: string | null = null;
  private readonly hosts: ClusterHosts;
  private refreshTimer: TimeoutHandle | null = null;
  private initTimer: TimeoutHandle | null = null;
  private request: http.ClientRequest | null = null;
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  private closed = false;

  constructor(
    private readonly callbacks: SubscriptionCallbacks,
    private readonly stats: SubscriptionStats,
    private readonly options: RestSubscriptionOptions,
    private readonly deps: RestSubscriptionDeps,
  ) {
    this.log = deps.log.forFile(__filename);
    this.hosts = new ClusterHosts(options.cluster, deps.clusterAddresses);
  }

  start(resourceNames: readonly string[]): void {
    this.resourceNames = [...resourceNames];
    if (this.options.initialFetchTimeoutMs > 0) {
      this.initTimer = this.deps.clock.setTimeout(() => {
        this.initTimer = null;
        this.stats.init_fetch_timeout.inc();
        this.log.warn(`REST config: initial fetch timeout for ${this.options.path}`);
        this.callbacks.onConfigUpdateFailed('fetch_timeout', null);
      }, this.options.initialFetchTimeoutMs);
    }
    this.fetch();
  }

  close(): void {
    this.closed = true;
    this.disableInitTimer();
    if (this.refreshTimer !== null) this.deps.clock.clearTimeout(this.refreshTimer);
    this.refreshTimer = null;
    this.request?.destroy();
    this.request = null;
    this.agent.destroy();
  }

  private fetch(): void {
    if (this.closed) return;
    this.stats.update_attempt.inc();
    const host = this.hosts.pick();
    if (host === null) {
      this.fetchFailed(`cluster '${this.options.cluster}' has no host`);
      return;
    }
    const body = JSON.stringify(
      this.deps.wire.requestJson({
        versionInfo: this.versionInfo ?? '',
        node: this.deps.node,
        resourceNames: this.resourceNames,
        typeUrl: this.options.typeUrl,
        responseNonce: '',
        errorDetail: null,
      }),
    );
    let done = false;
    const finish = (outcome: () => void) => {
      if (done || this.closed) return;
      done = true;
      this.deps.clock.clearTimeout(timeout);
      this.request = null;
      outcome();
    };
    const request = http.request({
      host: host.address,
      port: host.port,
      method: 'POST',
      path: this.options.path,
      agent: this.agent,
      // Envoy's REST fetcher names the cluster as the host.
      headers: { host: this.options.cluster, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    });
    const timeout = this.deps.clock.setTimeout(() => {
      finish(() => this.fetchFailed(`no answer within ${this.options.requestTimeoutMs} ms`));
      request.destroy();
    }, this.options.requestTimeoutMs);
    this.request = request;
    request.on('error', (error) => finish(() => this.fetchFailed(error.message)));
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', (error) => finish(() => this.fetchFailed(error.message)));
      response.on('end', () => finish(() => this.onResponse(response.statusCode ?? 0, Buffer.concat(chunks).toString('utf8'))));
    });
    request.end(body);
  }

  private onResponse(status: number, body: string): void {
    if (status === 304) {
      this.scheduleNext();
      return;
    }
    if (status !== 200) {
      this.fetchFailed(`status ${status}`);
      return;
    }
    this.disableInitTimer();
    // The next poll is scheduled once the subscriber has applied (or rejected) this answer.
    void this.apply(body).then(() => this.scheduleNext());
  }

  /** Decodes and applies one answer (a version already applied is only counted); a rejection is counted and passed on. */
  private async apply(body: string): Promise<void> {
    try {
      let json: JsonValue;
      try {
        json = JSON.parse(body) as JsonValue;
      } catch (error) {
        throw new FieldError('', `not a JSON DiscoveryResponse: ${(error as Error).message}`);
      }
      const response = await this.deps.decoder.decode(json, this.options.type);
      if (this.closed) return;
      if (response.versionInfo !== this.versionInfo) await this.callbacks.onConfigUpdate(response.resources, response.versionInfo);
      if (this.closed) return;
      this.versionInfo = response.versionInfo;
      this.stats.version.set(versionHash(response.versionInfo));
      this.stats.update_time.set(Date.now());
      this.stats.update_success.inc();
    } catch (error) {
      if (this.closed) return;
      const reason = error instanceof Error ? error : new Error(String(error));
      this.log.warn(`REST config for ${this.options.path} rejected: ${reason.message}`);
      this.stats.update_rejected.inc();
      this.callbacks.onConfigUpdateFailed('update_rejected', reason);
    }
  }

  /** Counted, not passed on: the subscriber waits for the next poll, or initial_fetch_timeout. */
  private fetchFailed(reason: string): void {
    this.log.warn(`REST update for ${this.options.path} failed: ${reason}`);
    this.stats.update_failure.inc();
    this.scheduleNext();
  }

  private scheduleNext(): void {
    if (this.closed) return;
    const delay = this.options.refreshDelayMs;
    this.refreshTimer = this.deps.clock.setTimeout(() => {
      this.refreshTimer = null;
      this.fetch();
    }, delay + (delay > 0 ? this.deps.random() % delay : 0));
  }

  private disableInitTimer(): void {
    if (this.initTimer !== null) this.deps.clock.clearTimeout(this.initTimer);
    this.initTimer = null;
  }
}
