// The supervisor's SDS secrets (Envoy's SecretManagerImpl, its dynamic providers): one client
// (SdsApi) per kind, name and config source that a TLS context names, made when the first
// context naming it is registered, and started with the others once the static clusters (the
// management servers among them) are up, or at once after that. An accepted secret goes into
// the supervisor's own store (which its contexts read: /certs, health checks), counts
// ssl_context_update_by_sds for each transport socket factory naming it, and goes to the workers.

import { FieldError } from '../config/errors';
import { childPath } from '../config/field_path';
import type { JsonObject } from '../config/json';
import type { Bootstrap, ClusterConfig, CommonTlsContextConfig } from '../config/model';
import type { ProtoSchema } from '../config/schema';
import { clusterTlsContextConfigs, secretReferences, type TlsContextConfig, tlsContextConfigs } from '../config/tls_context_configs';
import type { SubscriptionFactory } from '../config/xds/subscription_factory';
import type { Logger } from '../log/logger_api';
import { sanitizeStatName, type Counter, type Scope } from '../stats/stats';
import { type DynamicSecret, secretKey, type SecretStore } from '../tls/secret_store';
import { SslSocketFactoryStats } from '../tls/ssl_socket_factory_stats';
import { SdsApi } from './sds_api';

export interface SecretManagerDeps {
  readonly subscriptions: SubscriptionFactory;
  readonly schema: ProtoSchema;
  /** The supervisor's own secrets: the static ones, and each SDS one as accepted. */
  readonly store: SecretStore;
  /** The server's root scope: `sds.<name>.*` and the factories' counters live there. */
  readonly stats: Scope;
  readonly log: Logger;
  /**
   * Whether the TLS contexts naming an SDS secret could use this one (Envoy's validation
   * callbacks); throws (a FieldError) to reject it.
   */
  readonly check: (secret: DynamicSecret) => void;
  /** An SDS secret came, or was replaced: the workers get it. */
  readonly onSecret: (secret: DynamicSecret) => void;
}

/** One SDS secret as SecretsConfigDump.DynamicSecret shows it. */
export interface DynamicSecretDump {
  readonly name: string;
  /** `uninitialized` while none has come (a warming secret), as in Envoy. */
  readonly versionInfo: string;
  /** When the secret last came; while warming, when its client was made. */
  readonly lastUpdated: Date;
  /** The Secret as accepted, v3 JSON; null while warming. */
  readonly secret: JsonObject | null;
}

export class SecretManager {
  private readonly apis = new Map<string, SdsApi>();
  /** By secret key: the ssl_context_update_by_sds counter of each factory naming it, by factory. */
  private readonly consumers = new Map<string, Map<string, Counter>>();
  private started = false;

  constructor(private readonly deps: SecretManagerDeps) {}

  /**
   * Subscribes to the SDS secrets `common` names (each secret once), whose changes count in the
   * `ssl_context_update_by_sds` of the factory under `owner` (`cluster.<stat_name>`,
   * `listener.<address>`).
   * @param factory tells the factories of one owner apart (a context's path): registering one again replaces it
   */
  register(common: CommonTlsContextConfig, owner: string, side: 'client' | 'server', factory: string): void {
    for (const { config, kind } of secretReferences(common)) {
      const source = config.sdsConfig;
      if (source === null) continue;
      const key = secretKey(config, kind);
      let consumers = this.consumers.get(key);
      if (consumers === undefined) this.consumers.set(key, (consumers = new Map()));
      consumers.set(`${owner}\n${factory}`, new SslSocketFactoryStats(this.deps.stats.scope(owner), side).ssl_context_update_by_sds);
      if (this.apis.has(key)) continue;
      const { subscriptions, schema, stats, log } = this.deps;
      const api = new SdsApi({
        name: config.name,
        kind,
        source,
        subscriptions,
        schema,
        stats: stats.scope(`sds.${sanitizeStatName(config.name)}`),
        log,
        check: (value) => this.deps.check({ key, value }),
        onSecret: (value) => this.accepted({ key, value }),
      });
      this.apis.set(key, api);
      if (this.started) api.start();
    }
  }

  /**
   * A CDS cluster's TLS contexts: their static secrets must exist (as a static cluster's must
   * at load), their SDS secrets are subscribed to.
   * @throws FieldError, relative to the cluster, at the SdsSecretConfig naming an unknown static secret
   */
  registerCluster(cluster: ClusterConfig): void {
    const contexts = clusterTlsContextConfigs(cluster, '');
    this.checkStaticSecrets(contexts);
    for (const { common, path } of contexts) this.register(common, `cluster.${cluster.statName}`, 'client', path);
  }

  /**
   * An LDS listener's TLS contexts (`static_resources.listeners[0]` of the bootstrap it was
   * checked in), as registerCluster does a CDS cluster's: its counters under `listener.<address>`.
   * @throws FieldError, relative to that bootstrap, at the SdsSecretConfig naming an unknown static secret
   */
  registerListener(bootstrap: Bootstrap, owner: string): void {
    const contexts = tlsContextConfigs(bootstrap).filter((context) => context.listener !== null);
    this.checkStaticSecrets(contexts);
    for (const { common, path } of contexts) this.register(common, owner, 'server', path);
  }

  private checkStaticSecrets(contexts: readonly TlsContextConfig[]): void {
    for (const { common, path } of contexts) {
      for (const { config, kind, path: referencePath } of secretReferences(common)) {
        if (config.sdsConfig !== null || this.deps.store.find(config, kind) !== null) continue;
        const unknown = kind === 'tls_certificate' ? 'Unknown static secret' : 'Unknown static certificate validation context';
        throw new FieldError(childPath(childPath(path, referencePath), 'name'), `${unknown}: ${config.name}`);
      }
    }
  }

  /** Starts the clients registered so far; those registered later start at once. */
  start(): void {
    this.started = true;
    for (const api of this.apis.values()) api.start();
  }

  /** Settles once the SDS secrets `cluster`'s TLS contexts name (registered) have had their first update or failure. */
  initializedFor(cluster: ClusterConfig): Promise<void> {
    return this.contextsInitialized(clusterTlsContextConfigs(cluster, ''));
  }

  /** The same for an LDS listener's contexts (registerListener): it warms until then. */
  listenerInitialized(bootstrap: Bootstrap): Promise<void> {
    return this.contextsInitialized(tlsContextConfigs(bootstrap).filter((context) => context.listener !== null));
  }

  private contextsInitialized(contexts: readonly TlsContextConfig[]): Promise<void> {
    const keys = contexts.flatMap(({ common }) =>
      secretReferences(common).flatMap(({ config, kind }) => (config.sdsConfig === null ? [] : [secretKey(config, kind)])),
    );
    return Promise.all(keys.map((key) => this.apis.get(key)?.initialized)).then(() => undefined);
  }

  /** Settles once every secret registered so far has had its first update or failure. */
  initialized(): Promise<void> {
    return Promise.all([...this.apis.values()].map((api) => api.initialized)).then(() => undefined);
  }

  /** Every SDS secret, in the order they were first named. */
  dump(): DynamicSecretDump[] {
    return [...this.apis.values()].map((api) => {
      const accepted = api.current;
      if (accepted === null) return { name: api.name, versionInfo: 'uninitialized', lastUpdated: api.created, secret: null };
      return { name: api.name, versionInfo: accepted.versionInfo, lastUpdated: accepted.lastUpdated, secret: accepted.resource };
    });
  }

  close(): void {
    for (const api of this.apis.values()) api.close();
  }

  private accepted(secret: DynamicSecret): void {
    this.deps.store.set(secret);
    for (const counter of this.consumers.get(secret.key)?.values() ?? []) counter.inc();
    this.deps.onSecret(secret);
  }
}
