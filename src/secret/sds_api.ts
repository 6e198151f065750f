// One SDS secret's client (Envoy's SdsApi): a subscription to the Secret of one name, kind and
// config source, shared by every TLS context naming the three. Each update must hold that one
// secret, of that kind, whose content loads (PEM that parses, a key that matches its
// certificate); otherwise it is rejected (NACKed, with the field path) and the previous secret
// keeps serving. An update equal to the current secret changes only its version.

import { checkSecretCapabilities } from '../config/capabilities';
import type { ConfigSourceConfig } from '../config/config_source';
import { atField, FieldError } from '../config/errors';
import type { JsonObject } from '../config/json';
import type { SecretValue } from '../config/model';
import type { ProtoSchema } from '../config/schema';
import { secretOf } from '../config/tls_secret_model';
import { checkMessageProtoRules } from '../config/validation/proto_rules';
import { SECRET_RESOURCE } from '../config/xds/resource_types';
import { type ConfigUpdateFailureReason, type DecodedResource, type Subscription, type SubscriptionCallbacks, SubscriptionStats } from '../config/xds/subscription';
import type { SubscriptionFactory } from '../config/xds/subscription_factory';
import type { Logger } from '../log/logger_api';
import type { Scope } from '../stats/stats';
import type { SecretKind } from '../tls/secret_store';
import { checkSecret } from '../tls/tls_context';

const SECRET_TYPE = 'envoy.extensions.transport_sockets.tls.v3.Secret';

export interface SdsApiDeps {
  readonly name: string;
  readonly kind: SecretKind;
  readonly source: ConfigSourceConfig;
  readonly subscriptions: SubscriptionFactory;
  readonly schema: ProtoSchema;
  /** `sds.<name>`: the subscription's statistics. */
  readonly stats: Scope;
  readonly log: Logger;
  /**
   * A secret that loads on its own, before it is taken: throws (a FieldError) when a context
   * naming it could not use it, which rejects the update.
   */
  readonly check: (value: SecretValue) => void;
  /** The secret came, or was replaced by a different one. */
  readonly onSecret: (value: SecretValue) => void;
  /** The wall clock of last_updated (/config_dump). */
  readonly now?: () => Date;
}

/** The secret as accepted last, for /config_dump. */
export interface AcceptedSecret {
  /** The resource, decoded v3 JSON. */
  readonly resource: JsonObject;
  readonly versionInfo: string;
  readonly lastUpdated: Date;
}

export class SdsApi implements SubscriptionCallbacks {
  private subscription: Subscription | null = null;
  private accepted: AcceptedSecret | null = null;
  /** What the resource was compared by: its JSON as accepted. */
  private acceptedText = '';
  private readonly log: Logger;
  /** Made when the client is, as Envoy's secret data starts (`uninitialized`). */
  readonly created: Date;
  private initialize: (() => void) | null = null;
  /** Settles at the first update, accepted or not, or failure (Envoy's init target is then ready). */
  readonly initialized: Promise<void>;

  constructor(private readonly deps: SdsApiDeps) {
    this.log = deps.log.forFile(__filename);
    this.created = this.now();
    this.initialized = new Promise((resolve) => (this.initialize = resolve));
  }

  get name(): string {
    return this.deps.name;
  }

  /** The secret accepted last; null before the first. */
  get current(): AcceptedSecret | null {
    return this.accepted;
  }

  /** @throws UnsupportedConfigSourceError for a source this build does not run */
  start(): void {
    const { subscriptions, source, stats, name } = this.deps;
    this.subscription = subscriptions.subscribe(source, SECRET_RESOURCE, this, new SubscriptionStats(stats));
    this.subscription.start([name]);
  }

  close(): void {
    this.subscription?.close();
    this.subscription = null;
    this.ready();
  }

  onConfigUpdate(resources: readonly DecodedResource[], versionInfo: string): void {
    const { name, kind, schema } = this.deps;
    // Envoy's checks, and messages, of the update's size and name.
    if (resources.length === 0) throw new Error(`Missing SDS resources for ${name} in onConfigUpdate()`);
    if (resources.length !== 1) throw new Error(`Unexpected SDS secrets length: ${resources.length}`);
    const resource = resources[0]!.resource;
    const path = 'resources[0]';
    if (resources[0]!.name !== name) throw new FieldError(`${path}.name`, `Unexpected SDS secret (expecting ${name}): ${resources[0]!.name}`);
    checkMessageProtoRules(schema, SECRET_TYPE, resource, path);
    checkSecretCapabilities(resource, path);
    if (resource['tls_certificate'] === undefined && resource['validation_context'] === undefined) throw new FieldError(path, 'Secret type not implemented');
    const { value } = secretOf(resource);
    if (value.kind !== kind) throw new FieldError(path, `a ${kind} secret is expected, not a ${value.kind} one`);
    atField(path, () => checkSecret(value));
    const text = JSON.stringify(resource);
    const previous = this.acceptedText;
    if (text !== previous) this.deps.check(value);
    this.accepted = { resource, versionInfo, lastUpdated: this.now() };
    this.acceptedText = text;
    if (text !== previous) {
      this.log.info(`sds: secret '${name}' ${previous === '' ? 'added' : 'updated'} (version ${versionInfo})`);
      this.deps.onSecret(value);
    }
    this.ready();
  }

  /** The server starts without the secret rather than not at all, as Envoy's does. */
  onConfigUpdateFailed(reason: ConfigUpdateFailureReason, error: Error | null): void {
    if (reason === 'fetch_timeout') this.log.warn(`sds: initial fetch of secret '${this.deps.name}' timed out; its TLS contexts wait for it`);
    else if (error !== null) this.log.warn(`sds: update of secret '${this.deps.name}' failed (${reason}): ${error.message}`);
    this.ready();
  }

  private ready(): void {
    const initialize = this.initialize;
    this.initialize = null;
    initialize?.();
  }

  private now(): Date {
    return (this.deps.now ?? (() => new Date()))();
  }
}
