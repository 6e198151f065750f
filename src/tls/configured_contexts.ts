// Every TLS context a bootstrap configures, loaded as the supervisor keeps them for GET /certs
// and server.days_until_first_cert_expiring, in Envoy's creation order (tls_context_configs.ts).

import { atField } from '../config/errors';
import type { Bootstrap } from '../config/model';
import { tlsContextConfigs } from '../config/tls_context_configs';
import type { SecretSource } from './secret_store';
import { TlsContext } from './tls_context';

/** @throws FieldError at the common_tls_context that does not load */
export function configuredTlsContexts(bootstrap: Bootstrap, secrets: SecretSource): TlsContext[] {
  return tlsContextConfigs(bootstrap).map(({ path, common, side }) => atField(path, () => new TlsContext(common, side, { secrets })));
}
