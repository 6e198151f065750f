// The ways hot restart fails between epochs. Each is fatal to the epoch that starts (Envoy
// aborts on all of them); the classes let the entry point print the message and exit 1.

export class HotRestartError extends Error {
  override readonly name: string = 'HotRestartError';
}

/**
 * Another process holds this epoch's domain socket name: usually a second proxy started with the
 * same --base-id (and an abstract --socket-path). Envoy's HotRestartDomainSocketInUseException.
 */
export class HotRestartSocketInUseError extends HotRestartError {
  override readonly name = 'HotRestartSocketInUseError';
}

/** Binding or chmod-ing a domain socket failed for a reason other than the name being taken. */
export class HotRestartBindError extends HotRestartError {
  override readonly name = 'HotRestartBindError';
}

/**
 * Nothing is bound at the other epoch's socket (ECONNREFUSED, or ENOENT for a filesystem path):
 * that epoch is not running, or runs with another --base-id or --socket-path.
 */
export class HotRestartPeerUnreachableError extends HotRestartError {
  override readonly name = 'HotRestartPeerUnreachableError';
}

/** The previous epoch did not answer a request within the reply timeout. */
export class HotRestartTimeoutError extends HotRestartError {
  override readonly name = 'HotRestartTimeoutError';
}

/** A peer answered with something other than the reply the request calls for. */
export class HotRestartProtocolError extends HotRestartError {
  override readonly name = 'HotRestartProtocolError';
}

/** sendmsg on a domain socket failed for another reason (Envoy: `hot restart sendmsg() failed`). */
export class HotRestartSendError extends HotRestartError {
  override readonly name = 'HotRestartSendError';
}

/** --use-dynamic-base-id found every id it tried in use. */
export class DynamicBaseIdError extends HotRestartError {
  override readonly name = 'DynamicBaseIdError';

  constructor() {
    super('unable to select a dynamic base id');
  }
}

/** --base-id-path could not be written (Envoy logs this at critical level and carries on). */
export class BaseIdPathError extends HotRestartError {
  override readonly name = 'BaseIdPathError';

  constructor(path: string, cause: unknown) {
    super(`cannot open base id output file ${path} for writing.`, { cause });
  }
}
