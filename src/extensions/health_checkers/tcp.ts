// HealthCheck.tcp_health_check: connect, send a payload, expect payloads back
// (src/upstream/supervisor/health_check/tcp_probe.ts). Payloads in hex must decode.

import type { ExtensionDescriptor } from '../../config/extension';
import { FieldError } from '../../config/errors';
import { childPath, indexPath } from '../../config/field_path';
import { JsonObject, messageField, messageList, stringField } from '../../config/json';
import type { TcpHealthCheck } from '../../config/model';
import { leaf, list, Shape } from '../../config/shape';
import { TCP_CHECKER, type HealthCheckerFactory } from '../../upstream/supervisor/health_check/health_checkers';

const PAYLOAD: Shape = { fields: { text: leaf, binary: leaf } };
const HEX = /^(?:[0-9a-fA-F]{2})+$/;

export const TCP_HEALTH_CHECKER: ExtensionDescriptor<'proxy.health_checkers', HealthCheckerFactory> = {
  category: 'proxy.health_checkers',
  name: 'tcp_health_check',
  configType: null,
  shape: { fields: { send: PAYLOAD, receive: list(PAYLOAD) } },
  validate: (tcp, path) => {
    const payloads: [JsonObject, string][] = [];
    const send = messageField(tcp, 'send');
    if (send !== undefined) payloads.push([send, childPath(path, 'send')]);
    messageList(tcp, 'receive').forEach((p, i) => payloads.push([p, indexPath(childPath(path, 'receive'), i)]));
    for (const [payload, at] of payloads) {
      const text = stringField(payload, 'text');
      if (text !== '' && !HEX.test(text)) throw new FieldError(childPath(at, 'text'), `invalid hex string '${text}'`);
    }
  },
  model: (tcp): TcpHealthCheck => {
    const send = messageField(tcp, 'send');
    return { kind: 'tcp', send: send === undefined ? '' : payloadHex(send), receive: messageList(tcp, 'receive').map(payloadHex) };
  },
  factory: TCP_CHECKER,
};

/** A HealthCheck.Payload as lower-case hex: `text` is hex already (validated), `binary` is base64. */
function payloadHex(payload: JsonObject): string {
  const text = stringField(payload, 'text');
  return text !== '' ? text.toLowerCase() : Buffer.from(stringField(payload, 'binary'), 'base64').toString('hex');
}
