// static_resources.secrets and the secrets TLS contexts name, with Envoy 1.16's load-time
// messages: a static secret's name is unique among those of its kind, a context names static
// secrets that exist (of the kind it needs), and an SdsSecretConfig's sds_config is a config
// source as CDS's is. Pure.

import type { ConfigExtensions } from '../extension';
import { FieldError, FieldErrorCollector } from '../errors';
import { forEachExtension, SITE_CATEGORIES } from '../extension_sites';
import { childPath, indexPath } from '../field_path';
import { type JsonObject, messageField, messageList, stringField } from '../json';
import { TLS_TRANSPORT_SOCKET } from '../names';
import { type ConfigSourceContext, configSourceContext, validateConfigSource } from './config_sources';

/** The static secrets' names, by the kind of secret a TLS context may name. */
interface StaticSecretNames {
  readonly tlsCertificates: ReadonlySet<string>;
  readonly validationContexts: ReadonlySet<string>;
}

/** @param errors collects one error per invalid secret, and per TLS context that names secrets wrongly */
export function validateSecrets(bootstrap: JsonObject, extensions: ConfigExtensions, errors: FieldErrorCollector): void {
  const names = staticSecretNames(bootstrap, errors);
  const sources = configSourceContext(bootstrap);
  forEachExtension(bootstrap, extensions, (socket, site, path) => {
    if (site !== 'downstream_transport_socket' && site !== 'upstream_transport_socket') return;
    if (extensions.registeredName(SITE_CATEGORIES[site], socket) !== TLS_TRANSPORT_SOCKET) return;
    const common = messageField(messageField(socket, 'typed_config') ?? {}, 'common_tls_context');
    if (common === undefined) return;
    errors.run(() => validateSecretReferences(common, childPath(childPath(path, 'typed_config'), 'common_tls_context'), names, sources));
  });
}

/** Envoy's SecretManagerImpl::addStaticSecret: one name per kind. */
function staticSecretNames(bootstrap: JsonObject, errors: FieldErrorCollector): StaticSecretNames {
  const tlsCertificates = new Set<string>();
  const validationContexts = new Set<string>();
  messageList(messageField(bootstrap, 'static_resources') ?? {}, 'secrets').forEach((secret, i) => {
    const name = stringField(secret, 'name');
    const kind = secret['validation_context'] !== undefined ? 'CertificateValidationContext' : secret['tls_certificate'] !== undefined ? 'TlsCertificate' : null;
    if (kind === null) {
      // The other kinds are the capability check's to refuse; none at all is Envoy's error.
      if (secret['session_ticket_keys'] === undefined && secret['generic_secret'] === undefined) {
        errors.run(() => {
          throw new FieldError(indexPath('static_resources.secrets', i), 'Secret type not implemented');
        });
      }
      return;
    }
    const names = kind === 'TlsCertificate' ? tlsCertificates : validationContexts;
    errors.run(() => {
      if (names.has(name)) throw new FieldError(childPath(indexPath('static_resources.secrets', i), 'name'), `Duplicate static ${kind} secret name ${name}`);
      names.add(name);
    });
  });
  return { tlsCertificates, validationContexts };
}

/** @param path the common_tls_context's */
function validateSecretReferences(common: JsonObject, path: string, names: StaticSecretNames, sources: ConfigSourceContext): void {
  const certificatesPath = childPath(path, 'tls_certificate_sds_secret_configs');
  const certificates = messageList(common, 'tls_certificate_sds_secret_configs');
  // Envoy 1.16's protos: one certificate from SDS.
  if (certificates.length > 1) throw new FieldError(certificatesPath, 'value must contain no more than 1 item(s)');
  // Envoy reads them only when tls_certificates is empty.
  if (messageList(common, 'tls_certificates').length === 0) {
    certificates.forEach((config, i) => validateReference(config, indexPath(certificatesPath, i), names.tlsCertificates, 'Unknown static secret', sources));
  }
  const combined = messageField(common, 'combined_validation_context');
  const [validation, validationPath] =
    combined === undefined
      ? [messageField(common, 'validation_context_sds_secret_config'), childPath(path, 'validation_context_sds_secret_config')]
      : [messageField(combined, 'validation_context_sds_secret_config'), childPath(childPath(path, 'combined_validation_context'), 'validation_context_sds_secret_config')];
  if (validation !== undefined) validateReference(validation, validationPath, names.validationContexts, 'Unknown static certificate validation context', sources);
}

function validateReference(config: JsonObject, path: string, staticNames: ReadonlySet<string>, unknown: string, sources: ConfigSourceContext): void {
  const source = messageField(config, 'sds_config');
  if (source !== undefined) {
    validateConfigSource(source, childPath(path, 'sds_config'), sources);
    return;
  }
  const name = stringField(config, 'name');
  if (!staticNames.has(name)) throw new FieldError(childPath(path, 'name'), `${unknown}: ${name}`);
}
