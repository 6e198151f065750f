// What a gRPC subscription asks of the stream that carries it, whichever protocol that stream
// speaks (state of the world, GrpcMux; delta, DeltaGrpcMux): a watch on names of one type, told
// whole updates of what it names, rejections and failures.

import type { ResourceType } from './resource_types';
import type { DecodedResource } from './subscription';

export interface MuxWatchCallbacks {
  /**
   * A promise delays the ACK, and every later response of the stream, until it settles.
   * @throws Error (or rejects) to reject the update: every watch of the type is told, and the response NACKed
   */
  onConfigUpdate(resources: readonly DecodedResource[], versionInfo: string): void | Promise<void>;
  onConfigUpdateFailed(reason: 'connection_failure' | 'update_rejected', error: Error | null): void;
}

export interface MuxWatch {
  /** Stops the watch; the server is told the names it no longer needs. */
  remove(): void;
}

export interface XdsMux {
  /** Watches `names` (every resource when empty) of a type; opens the stream if it is not open. */
  addWatch(typeUrl: string, type: ResourceType, names: readonly string[], callbacks: MuxWatchCallbacks): MuxWatch;
  /** Closes the stream and stops reconnecting; no callback follows. */
  close(): void;
}
