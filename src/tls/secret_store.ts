// The secrets a process's TLS contexts read (Envoy's secret manager, as its contexts see it):
// the bootstrap's static ones by name, and the latest of each SDS secret by its key (its kind,
// name and config source). In the supervisor its SDS client sets them; in a worker, the
// supervisor's messages. A context looks its secrets up again whenever the generation moved.

import type { SdsSecretConfig, SecretConfig, SecretValue } from '../config/model';

export type SecretKind = SecretValue['kind'];

/** What a TLS context reads its secrets from. */
export interface SecretSource {
  /** Moves on at every change: a context compares it before each connection. */
  readonly generation: number;
  /** The secret `config` names, of `kind`; null when it has not come (or is of another kind). */
  find(config: SdsSecretConfig, kind: SecretKind): SecretValue | null;
}

/** An SDS secret as the supervisor sends it to its workers. */
export interface DynamicSecret {
  readonly key: string;
  readonly value: SecretValue;
}

/**
 * An SDS secret's identity: Envoy keeps one provider per kind, name and config source, which
 * every context naming the three shares.
 */
export function secretKey(config: SdsSecretConfig, kind: SecretKind): string {
  return `${kind}\n${config.name}\n${JSON.stringify(config.sdsConfig)}`;
}

export class SecretStore implements SecretSource {
  generation = 0;
  /** Static secrets by kind, then name. */
  private readonly statics = new Map<string, SecretValue>();
  private readonly dynamic = new Map<string, SecretValue>();

  constructor(staticSecrets: readonly SecretConfig[]) {
    for (const { name, value } of staticSecrets) {
      // Validation refused a second secret of a kind and name: the first one stands.
      const key = staticKey(value.kind, name);
      if (!this.statics.has(key)) this.statics.set(key, value);
    }
  }

  find(config: SdsSecretConfig, kind: SecretKind): SecretValue | null {
    const value = config.sdsConfig === null ? this.statics.get(staticKey(kind, config.name)) : this.dynamic.get(secretKey(config, kind));
    return value?.kind === kind ? value : null;
  }

  /** An SDS secret came, or was replaced. */
  set(secret: DynamicSecret): void {
    this.dynamic.set(secret.key, secret.value);
    this.generation++;
  }

  /** Every SDS secret as now, for a worker that starts. */
  dynamicSecrets(): DynamicSecret[] {
    return [...this.dynamic].map(([key, value]) => ({ key, value }));
  }
}

function staticKey(kind: SecretKind, name: string): string {
  return `${kind}\n${name}`;
}
