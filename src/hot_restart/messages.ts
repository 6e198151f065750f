// The messages between two epochs, with the meaning of Envoy's envoy.HotRestartMessage
// (source/server/hot_restart.proto) minus its `stats` request: our stats live in shared memory.
// The payload is JSON shaped like that proto's JSON mapping, plus a protocol version; a message
// of another version, or one this version does not know, is answered with
// didnt_recognize_your_last_message.

import * as net from 'node:net';

export const HOT_RESTART_PROTOCOL_VERSION = 1;

export type HotRestartRequest =
  /**
   * `workerIndex`: that worker's socket of a reuse_port listener (Envoy 1.16 binds those afresh
   * beside the parent's, whose queued connections are then reset; later Envoys ask by index too);
   * null for the socket every worker shares.
   */
  | { readonly type: 'pass_listen_socket'; readonly address: string; readonly workerIndex: number | null }
  | { readonly type: 'shutdown_admin' }
  | { readonly type: 'drain_listeners' }
  | { readonly type: 'terminate' };

export type HotRestartReply =
  /**
   * The descriptor travels as SCM_RIGHTS data beside the payload. Sending, `fd` is the parent's
   * own descriptor; received, it is the receiver's copy. null: the parent has no such socket.
   */
  | { readonly type: 'pass_listen_socket'; readonly fd: number | null }
  | { readonly type: 'shutdown_admin'; readonly originalStartTimeUnixSeconds: number };

export type HotRestartMessage =
  | { readonly kind: 'request'; readonly request: HotRestartRequest }
  | { readonly kind: 'reply'; readonly reply: HotRestartReply }
  | { readonly kind: 'didnt_recognize_your_last_message' };

/** What arrived when it was not a message of this protocol version. */
export interface UnrecognizedMessage {
  readonly kind: 'unrecognized';
  readonly reason: string;
}

export type DecodedMessage = HotRestartMessage | UnrecognizedMessage;

export const DIDNT_RECOGNIZE: HotRestartMessage = { kind: 'didnt_recognize_your_last_message' };

/**
 * A listen socket's address as requests name it, Envoy's `Address::Instance::asString()` with
 * its scheme: `tcp://127.0.0.1:10000`, `tcp://[::1]:80`.
 */
export function tcpListenAddress(ip: string, port: number): string {
  return net.isIPv6(ip) ? `tcp://[${ip}]:${port}` : `tcp://${ip}:${port}`;
}

/** A short name for logs and errors: `pass_listen_socket request`, `shutdown_admin reply`. */
export function describeMessage(message: DecodedMessage): string {
  switch (message.kind) {
    case 'request':
      return `${message.request.type} request`;
    case 'reply':
      return `${message.reply.type} reply`;
    case 'didnt_recognize_your_last_message':
      return 'didnt_recognize_your_last_message';
    case 'unrecognized':
      return `unrecognized message (${message.reason})`;
  }
}

/** The payload of `message`, and the descriptors to attach to it. */
export function encodeMessage(message: HotRestartMessage): { payload: Buffer; fds: number[] } {
  const version = HOT_RESTART_PROTOCOL_VERSION;
  switch (message.kind) {
    case 'request':
      return { payload: toJson({ version, request: wireRequest(message.request) }), fds: [] };
    case 'reply': {
      const { reply } = message;
      if (reply.type === 'shutdown_admin') {
        const body = { original_start_time_unix_seconds: reply.originalStartTimeUnixSeconds };
        return { payload: toJson({ version, reply: { shutdown_admin: body } }), fds: [] };
      }
      const fds = reply.fd === null ? [] : [reply.fd];
      return { payload: toJson({ version, reply: { pass_listen_socket: { fd: reply.fd ?? -1 } } }), fds };
    }
    case 'didnt_recognize_your_last_message':
      return { payload: toJson({ version, didnt_recognize_your_last_message: true }), fds: [] };
  }
}

function wireRequest(request: HotRestartRequest): Record<string, object> {
  if (request.type === 'pass_listen_socket') {
    const { address, workerIndex } = request;
    return { pass_listen_socket: workerIndex === null ? { address } : { address, worker_index: workerIndex } };
  }
  return { [request.type]: {} };
}

function toJson(value: object): Buffer {
  return Buffer.from(JSON.stringify(value));
}

/**
 * Reads a payload. `fds` are the descriptors that came with it; a pass_listen_socket reply takes
 * the one it announced, and the caller owns (and must close) any that `unusedFds` lists.
 */
export function decodeMessage(
  payload: Uint8Array,
  fds: readonly number[],
): { message: DecodedMessage; unusedFds: number[] } {
  const message = parse(payload, fds.length > 0);
  const used = message.kind === 'reply' && message.reply.type === 'pass_listen_socket' && message.reply.fd !== null;
  if (!used) return { message, unusedFds: [...fds] };
  const [fd, ...unusedFds] = fds;
  return { message: { kind: 'reply', reply: { type: 'pass_listen_socket', fd } }, unusedFds };
}

/** Thrown while parsing; parse() turns it into an UnrecognizedMessage. */
class Unrecognized extends Error {}

function parse(payload: Uint8Array, hasFd: boolean): DecodedMessage {
  try {
    return parseEnvelope(JSON.parse(Buffer.from(payload).toString('utf8')), hasFd);
  } catch (error) {
    if (error instanceof SyntaxError) return { kind: 'unrecognized', reason: 'not JSON' };
    if (error instanceof Unrecognized) return { kind: 'unrecognized', reason: error.message };
    throw error;
  }
}

function parseEnvelope(value: unknown, hasFd: boolean): HotRestartMessage {
  const envelope = object(value, 'message');
  if (envelope.version !== HOT_RESTART_PROTOCOL_VERSION) {
    const version = JSON.stringify(envelope.version);
    throw new Unrecognized(`protocol version ${version}, this process speaks ${HOT_RESTART_PROTOCOL_VERSION}`);
  }
  const [key, body] = onlyOne(envelope, 'version');
  switch (key) {
    case 'request':
      return { kind: 'request', request: parseRequest(body) };
    case 'reply':
      return { kind: 'reply', reply: parseReply(body, hasFd) };
    case 'didnt_recognize_your_last_message':
      if (body !== true) throw new Unrecognized('didnt_recognize_your_last_message is not true');
      return DIDNT_RECOGNIZE;
    default:
      throw new Unrecognized(`unknown field "${key}"`);
  }
}

function parseRequest(value: unknown): HotRestartRequest {
  const [type, body] = onlyOne(object(value, 'request'));
  const fields = object(body, type);
  switch (type) {
    case 'pass_listen_socket':
      if (typeof fields.address !== 'string') throw new Unrecognized('pass_listen_socket.address is not a string');
      if (fields.worker_index !== undefined && !(Number.isSafeInteger(fields.worker_index) && (fields.worker_index as number) >= 0)) {
        throw new Unrecognized('pass_listen_socket.worker_index is not a worker index');
      }
      return { type, address: fields.address, workerIndex: (fields.worker_index as number | undefined) ?? null };
    case 'shutdown_admin':
    case 'drain_listeners':
    case 'terminate':
      return { type };
    default:
      throw new Unrecognized(`unknown request "${type}"`);
  }
}

function parseReply(value: unknown, hasFd: boolean): HotRestartReply {
  const [type, body] = onlyOne(object(value, 'reply'));
  const fields = object(body, type);
  switch (type) {
    case 'pass_listen_socket': {
      const fd = fields.fd;
      if (!Number.isInteger(fd) || (fd as number) < -1) {
        throw new Unrecognized('pass_listen_socket.fd is not a descriptor or -1');
      }
      if (fd !== -1 && !hasFd) throw new Unrecognized('pass_listen_socket reply without its descriptor');
      // Replaced by the received descriptor in decodeMessage.
      return { type, fd: fd === -1 ? null : (fd as number) };
    }
    case 'shutdown_admin': {
      const seconds = fields.original_start_time_unix_seconds;
      if (!Number.isSafeInteger(seconds) || (seconds as number) < 0) {
        throw new Unrecognized('shutdown_admin.original_start_time_unix_seconds is not a non-negative integer');
      }
      return { type, originalStartTimeUnixSeconds: seconds as number };
    }
    default:
      throw new Unrecognized(`unknown reply "${type}"`);
  }
}

function object(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Unrecognized(`${what} is not an object`);
  }
  return value as Record<string, unknown>;
}

/** The one field of a oneof (besides `except`). */
function onlyOne(fields: Record<string, unknown>, except?: string): [string, unknown] {
  const keys = Object.keys(fields).filter((k) => k !== except);
  if (keys.length !== 1) {
    throw new Unrecognized(`expected exactly one field, got ${keys.length === 0 ? 'none' : keys.join(', ')}`);
  }
  return [keys[0], fields[keys[0]]];
}
