// The command operators that read StreamInfo (Envoy 1.16's StreamInfoFormatter): durations in
// whole milliseconds, counts as numbers, addresses and names as text, the TLS session's facts.
// Each returns null (`-`) for what is unknown, as Envoy does. Names from the configuration, the
// host's name and the certificates' facts may be Unicode: they print as their UTF-8 bytes
// (src/common/byte_string.ts); the SNI is bytes already, as the client sent them.

import * as os from 'node:os';
import { utf8Bytes } from '../common/byte_string';
import type { JsonValue } from '../config/json';
import { NOT_YET, type SslConnectionInfo, type StreamInfo } from '../stream_info/stream_info';
import { responseFlagsString } from '../stream_info/response_flag_names';
import { socketAddressString } from '../stream_info/downstream_connection';
import { SSL_TEXT_FACTS } from '../stream_info/ssl_text_facts';
import type { FormatterProvider } from './format_context';

type Extract = (info: StreamInfo) => string | number | null;

/** Envoy casts a duration to whole milliseconds (truncating); NOT_YET is unset. */
const millis = (at: number): number | null => (at === NOT_YET ? null : Math.floor(at));

const nonEmpty = (text: string | null): string | null => (text === null || text === '' ? null : text);

/** `1.2.3.4:80` -> `1.2.3.4`, `[::1]:80` -> `::1`. */
export function addressWithoutPort(address: string): string {
  if (address.startsWith('[')) return address.slice(1, address.indexOf(']'));
  const colon = address.lastIndexOf(':');
  return colon < 0 ? address : address.slice(0, colon);
}

const withoutPort = (address: string | null): string | null => (address === null ? null : addressWithoutPort(address));

/** The same extractor with its text as UTF-8 bytes: for what may not be ASCII. */
function unicode(extract: (info: StreamInfo) => string | null): Extract {
  return (info) => {
    const text = extract(info);
    return text === null ? null : utf8Bytes(text);
  };
}

/** A TLS fact: unset without TLS, and unset when empty, as Envoy's extractor has it. */
function ssl(read: (ssl: SslConnectionInfo) => string | null): Extract {
  return unicode((info) => {
    const session = info.connection.ssl;
    return session === null ? null : nonEmpty(read(session));
  });
}

function operators(): Record<string, Extract> {
  const hostname = utf8Bytes(os.hostname());
  return {
    REQUEST_DURATION: (info) => millis(info.lastDownstreamRxByteReceived),
    RESPONSE_DURATION: (info) => millis(info.firstUpstreamRxByteReceived),
    RESPONSE_TX_DURATION: (info) => {
      const sent = millis(info.lastDownstreamTxByteSent);
      const received = millis(info.firstUpstreamRxByteReceived);
      return sent === null || received === null ? null : Math.floor(info.lastDownstreamTxByteSent - info.firstUpstreamRxByteReceived);
    },
    DURATION: (info) => millis(info.requestComplete),
    BYTES_RECEIVED: (info) => info.bytesReceived,
    BYTES_SENT: (info) => info.bytesSent,
    PROTOCOL: (info) => info.protocol,
    RESPONSE_CODE: (info) => info.responseCode,
    RESPONSE_CODE_DETAILS: unicode((info) => info.responseCodeDetails),
    CONNECTION_TERMINATION_DETAILS: unicode((info) => info.connectionTerminationDetails),
    RESPONSE_FLAGS: (info) => responseFlagsString(info.responseFlags),
    UPSTREAM_HOST: (info) => info.upstreamHost,
    UPSTREAM_CLUSTER: unicode((info) => nonEmpty(info.upstreamCluster)),
    UPSTREAM_LOCAL_ADDRESS: (info) => info.upstreamLocalAddress,
    UPSTREAM_TRANSPORT_FAILURE_REASON: unicode((info) => nonEmpty(info.upstreamTransportFailureReason)),
    DOWNSTREAM_LOCAL_ADDRESS: (info) => info.connection.localAddress,
    DOWNSTREAM_LOCAL_ADDRESS_WITHOUT_PORT: (info) => withoutPort(info.connection.localAddress),
    // Printed only when a line asks: the trusted client, else the direct peer.
    DOWNSTREAM_REMOTE_ADDRESS: (info) => (info.trustedClient === null ? info.connection.directRemoteAddress : socketAddressString(info.trustedClient.ip, info.trustedClient.port)),
    DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT: (info) => info.trustedClient?.ip ?? withoutPort(info.connection.directRemoteAddress),
    DOWNSTREAM_DIRECT_REMOTE_ADDRESS: (info) => info.connection.directRemoteAddress,
    DOWNSTREAM_DIRECT_REMOTE_ADDRESS_WITHOUT_PORT: (info) => withoutPort(info.connection.directRemoteAddress),
    CONNECTION_ID: (info) => info.connection.id,
    REQUESTED_SERVER_NAME: (info) => nonEmpty(info.connection.requestedServerName),
    ROUTE_NAME: unicode((info) => nonEmpty(info.routeName)),
    HOSTNAME: () => hostname,
    ...Object.fromEntries(Object.entries(SSL_TEXT_FACTS).map(([name, read]) => [name, ssl(read)])),
  };
}

/** The operator named `name` (e.g. `DURATION`), or undefined when it is not a StreamInfo operator. */
export function streamInfoOperator(name: string): FormatterProvider | undefined {
  const table = operators();
  if (!Object.hasOwn(table, name)) return undefined;
  const extract = table[name]!;
  return {
    text: (context) => {
      const value = extract(context.info);
      return value === null ? null : String(value);
    },
    value: (context): JsonValue => extract(context.info),
  };
}
